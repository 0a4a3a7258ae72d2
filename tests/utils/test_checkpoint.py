"""The draw checkpoint at the file boundary: hostile files are refused naming file and line."""

import json
import os

import pytest

from skdc.utils._checkpoint import CheckpointError, DrawCheckpoint, is_checkpoint
from tests._fuzz import CASES

FIELDS = {"error": "number", "acc": "finite", "seconds": "finite", "n_iter?": "int",
          "converged?": "bool"}
ROW = {"error": 0.25, "acc": 0.9, "seconds": 0.1, "n_iter": 3, "converged": True}


def _write(path, *lines, end="\n"):
    path.write_bytes(("\n".join(lines) + end).encode() if isinstance(lines[0], str)
                     else b"".join(lines))


def _header(fp=None):
    return json.dumps({"fingerprint": fp or {"seed": 0}})


def test_round_trip_keeps_every_bit(tmp_path):
    path = tmp_path / "draws.jsonl"
    ck = DrawCheckpoint(path, {"seed": 0}, FIELDS)
    row = dict(ROW, error=0.1 + 0.2, n_iter=None)
    ck.put("0.1/7", row)
    back = DrawCheckpoint(path, {"seed": 0}, FIELDS)
    assert back.get("0.1/7") == row and back.n_read == 1
    assert back.read_keys == {"0.1/7"}


def test_nan_and_inf_errors_are_numbers(tmp_path):
    path = tmp_path / "draws.jsonl"
    DrawCheckpoint(path, {"seed": 0}, FIELDS).put("k", dict(ROW, error=float("inf")))
    assert DrawCheckpoint(path, {"seed": 0}, FIELDS).get("k")["error"] == float("inf")


def test_a_line_cut_short_is_dropped_and_the_file_repaired(tmp_path):
    path = tmp_path / "draws.jsonl"
    ck = DrawCheckpoint(path, {"seed": 0}, FIELDS)
    for k in range(3):
        ck.put(f"k{k}", ROW)
    text = path.read_text()
    path.write_text(text[:-25])  # the last record cut in the middle
    back = DrawCheckpoint(path, {"seed": 0}, FIELDS)
    assert len(back) == 2 and back.get("k2") is None
    back.put("k2", ROW)
    # the next run reads a clean file: no broken line before the appended one
    assert len(DrawCheckpoint(path, {"seed": 0}, FIELDS)) == 3


def test_a_record_whose_newline_was_lost_is_kept(tmp_path):
    path = tmp_path / "draws.jsonl"
    DrawCheckpoint(path, {"seed": 0}, FIELDS).put("k", ROW)
    path.write_text(path.read_text().rstrip("\n"))
    assert DrawCheckpoint(path, {"seed": 0}, FIELDS).get("k") == ROW
    assert path.read_text().endswith("\n")


def test_other_settings_are_refused(tmp_path):
    path = tmp_path / "draws.jsonl"
    DrawCheckpoint(path, {"seed": 0, "content": "a"}, FIELDS)
    with pytest.raises(CheckpointError, match="differ in content"):
        DrawCheckpoint(path, {"seed": 0, "content": "b"}, FIELDS)


@pytest.mark.parametrize("line, match", [
    ('{"key": "x"}', r"line 2 must be a record .* got \['key'\]"),
    ("[1, 2]", "line 2 must be a record .* got list"),
    ("not json", "line 2 is not a JSON record"),
    ('{"key": 3, "row": {}}', "line 2: the key must be a string"),
    ('{"key": "x", "row": [1]}', "line 2: the key must be a string and the row an object"),
    ('{"key": "x", "row": {"acc": 0.9, "seconds": 0.1}}', "line 2: the row lacks .*'error'"),
    ('{"key": "x", "row": {"error": "0.3", "acc": 0.9, "seconds": 0.1}}',
     "line 2: the field 'error' must be a number; got '0.3'"),
    ('{"key": "x", "row": {"error": 0.3, "acc": NaN, "seconds": 0.1}}',
     "line 2: the field 'acc' must be a finite number"),
    ('{"key": "x", "row": {"error": true, "acc": 0.9, "seconds": 0.1}}',
     "line 2: the field 'error' must be a number; got True"),
    ('{"key": "x", "row": {"error": 0.3, "acc": 0.9, "seconds": 0.1, "n_iter": 2.5}}',
     "the field 'n_iter' must be an integer"),
    ('{"key": "x", "row": {"error": 0.3, "acc": 0.9, "seconds": 0.1, "evil": 1}}',
     r"fields \['evil'\] this run does not write"),
])
def test_bad_records_name_the_file_and_the_line(tmp_path, line, match):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, _header(), line, json.dumps({"key": "y", "row": ROW}))
    with pytest.raises(CheckpointError, match=match) as exc:
        DrawCheckpoint(path, {"seed": 0}, FIELDS)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_one_key_with_two_rows_is_refused(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, _header(), json.dumps({"key": "x", "row": ROW}),
           json.dumps({"key": "x", "row": dict(ROW, error=0.5)}))
    with pytest.raises(CheckpointError, match="line 3 repeats the key 'x'"):
        DrawCheckpoint(path, {"seed": 0}, FIELDS)


@pytest.mark.parametrize("content, match", [
    (b"\x89PNG\r\n\x1a\n\x00\xff", "not UTF-8 text"),
    (b"[1, 2]\n", "not a draw checkpoint"),
    (b'{"key": "x"}\n', "not a draw checkpoint"),
])
def test_hostile_files_are_refused_naming_the_file(tmp_path, content, match):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=match) as exc:
        DrawCheckpoint(path, {"seed": 0}, FIELDS)
    assert str(path) in str(exc.value)


def test_a_directory_is_refused(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    path.mkdir()
    with pytest.raises(CheckpointError, match="draws.jsonl: checkpoint is a directory"):
        DrawCheckpoint(path, {"seed": 0}, FIELDS)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    os.mkfifo(path)
    with pytest.raises(CheckpointError, match="is a named pipe"):
        DrawCheckpoint(path, {"seed": 0}, FIELDS)


def test_a_link_is_never_read_nor_appended_through(tmp_path):
    CASES["checkpoint"] += 1
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    link = tmp_path / "draws.jsonl"
    link.symlink_to(victim)
    with pytest.raises(CheckpointError, match="is a link"):
        DrawCheckpoint(link, {"seed": 0}, FIELDS)
    # a link put in place after the checkpoint was opened: the append refuses it
    path = tmp_path / "real.jsonl"
    ck = DrawCheckpoint(path, {"seed": 0}, FIELDS)
    path.unlink()
    path.symlink_to(victim)
    with pytest.raises(CheckpointError, match="cannot be appended to"):
        ck.put("k", ROW)
    assert victim.read_text() == "precious\n"


def test_a_huge_checkpoint_is_refused(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    DrawCheckpoint(path, {"seed": 0}, FIELDS).put("k", ROW)
    with pytest.raises(CheckpointError, match="above the limit|more than 50 bytes"):
        DrawCheckpoint(path, {"seed": 0}, FIELDS, max_bytes=50)


def test_is_checkpoint_recognises_only_ours(tmp_path):
    ours = tmp_path / "a.jsonl"
    DrawCheckpoint(ours, {"seed": 0})
    other = tmp_path / "b.jsonl"
    other.write_text('{"weights": [1, 2]}\n')
    link = tmp_path / "c.jsonl"
    link.symlink_to(ours)
    assert is_checkpoint(ours)
    assert not is_checkpoint(other) and not is_checkpoint(link)
    assert not is_checkpoint(tmp_path)


def _positive_error(key, row):
    """A check beyond the fields' kinds, as the entropy bound's identities are."""
    return None if row["error"] > 0 else f"the error of {key!r} must be positive"


def test_a_check_refuses_a_row_read_back_naming_the_line(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, _header(), json.dumps({"key": "a", "row": ROW}),
           json.dumps({"key": "b", "row": dict(ROW, error=0.0)}))
    with pytest.raises(CheckpointError, match="line 3: the error of 'b' must be positive") as exc:
        DrawCheckpoint(path, {"seed": 0}, FIELDS, check=_positive_error)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    assert len(DrawCheckpoint(path, {"seed": 0}, FIELDS)) == 2  # without the check: read


def test_a_row_the_check_faults_is_kept_for_the_run_but_not_written(tmp_path):
    path = tmp_path / "draws.jsonl"
    ck = DrawCheckpoint(path, {"seed": 0}, FIELDS, check=_positive_error)
    ck.put("a", ROW)
    ck.put("b", dict(ROW, error=0.0))
    assert ck.get("b")["error"] == 0.0
    back = DrawCheckpoint(path, {"seed": 0}, FIELDS, check=_positive_error)
    assert back.read_keys == {"a"}  # the resumed run computes "b" again


def test_the_entropy_checkpoint_of_skdc_0_1_is_refused_in_words(tmp_path):
    """skdc 0.1's entropy bound wrote one JSON table of a digest and the pairs; it is no
    draw checkpoint of another run ("they differ in all") but a file to delete."""
    CASES["checkpoint"] += 1
    path = tmp_path / "grid.json"
    old = json.dumps({"fingerprint": "ab" * 32, "pairs": [{"k": 1, "nu2": 0.4}]})
    path.write_text(old)
    with pytest.raises(CheckpointError, match="is an entropy-grid checkpoint in the format of "
                                              r"skdc 0\.1.*delete that file") as exc:
        DrawCheckpoint(path, {"seed": 0})
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    assert path.read_text() == old  # not rewritten


@pytest.mark.parametrize("lines, match", [
    (["[" * 100_000 + "]" * 100_000], "is not a draw checkpoint"),
    ([_header(), "[" * 100_000 + "]" * 100_000], "line 2 is not a JSON record"),
])
def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path, lines, match):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, *lines)
    with pytest.raises(CheckpointError, match=match):
        DrawCheckpoint(path, {"seed": 0}, FIELDS)
    if len(lines) == 1:
        assert not is_checkpoint(path)


def test_an_integer_beyond_the_floats_is_not_finite(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, _header(), '{"key": "x", "row": {"error": 0.3, "acc": 1%s, "seconds": 0.1}}'
           % ("0" * 400))
    with pytest.raises(CheckpointError, match="the field 'acc' must be a finite number"):
        DrawCheckpoint(path, {"seed": 0}, FIELDS)


def test_a_fingerprint_key_with_a_line_break_stays_on_one_line(tmp_path):
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, _header({"seed": 0, "a\nb": 1}))
    with pytest.raises(CheckpointError, match=r"differ in 'a\\nb'\)") as exc:
        DrawCheckpoint(path, {"seed": 0}, FIELDS)
    assert "\n" not in str(exc.value)


def test_an_integer_beyond_the_floats_is_no_number_either(tmp_path):
    """A ``"number"`` field may be NaN or infinite, but the row is read back as floats: an
    integer no float holds would crash the run that reads it (OverflowError), so it is refused."""
    CASES["checkpoint"] += 1
    path = tmp_path / "draws.jsonl"
    _write(path, _header(), '{"key": "x", "row": {"error": 1%s, "acc": 0.5, "seconds": 0.1}}'
           % ("0" * 400))
    with pytest.raises(CheckpointError, match="the field 'error' must be a number"):
        DrawCheckpoint(path, {"seed": 0}, FIELDS)
