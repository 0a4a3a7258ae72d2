"""The file boundary's folders of outputs: created or checked, filled, cleared of only what
skdc wrote, and owned by the record of the run that filled them.

:func:`check_folder` and :func:`ensure_folder` refuse a folder path that is (or lies under) a
file, a link where skdc may later clear the folder, or a folder that cannot be written;
:func:`write_outputs` writes several shared outputs into one; :func:`remove_written` removes
the files skdc wrote there, by name, and refuses a folder holding anything else, removing
nothing. A run that fills a folder (the audit's report) leaves a record of itself beside its
files, ``skdc-run.json`` (:func:`write_run_record`); before a run writes there,
:func:`check_run_folder` refuses a folder holding another run's outputs unless ``--force``,
which clears exactly that run's files (:func:`clear_run_folder`); the same run (resumed,
repeated) replaces its own.
"""

# Licence: BSD 3 clause

import contextlib
import json
import os
import stat

from ._files import FileError, file_kind, peek_regular
from ._outputs import check_output, write_output

__all__ = [
    "check_folder",
    "check_run_folder",
    "clear_run_folder",
    "ensure_folder",
    "remove_written",
    "write_outputs",
    "write_run_record",
]


def check_folder(path, what="the output folder", *, allow_link=True, error=FileError):
    """Refuse, before anything is written, a folder path :func:`ensure_folder` would refuse.

    Returns
    -------
    path : str
        The folder (it may not exist yet).
    """
    path = os.fspath(path)
    if not path:
        raise error(f"{what} is empty; give a folder.")
    parent = os.path.abspath(path)
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        where = "is" if os.path.abspath(path) == parent else f"lies under {parent}, which is"
        raise error(f"{path}: {what} {where} a file, not a folder; give a folder.")
    if not allow_link and os.path.islink(path):
        raise error(f"{path}: {what} is a link; skdc fills (and may clear) this folder, so it "
                    "never reaches it through a link. Give a real folder.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise error(f"{path}: cannot write into {what} ({parent} is not writable).")
    return path


def ensure_folder(path, what="the output folder", *, allow_link=True, mode=None,
                  error=FileError):
    """Create the folder ``path`` with its parents, or check the one that is there.

    Refuses, in one line, a path that is (or lies under) an existing file, a link when
    ``allow_link`` is false (a folder skdc fills and may later clear, such as a checkpoint
    folder, is never reached through a link), and a folder that cannot be written.

    ``mode`` (``0o700`` for a folder of owner-only files, such as the analyst's maps and
    model): the folder, when created here, has exactly these permission bits from its first
    moment, whatever the umask (its parents get the usual ones); an existing folder is left as
    it is.

    Returns
    -------
    path : str
        The folder.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._folders import ensure_folder
    >>> base = tempfile.mkdtemp()
    >>> _ = open(os.path.join(base, "f"), "w").close()
    >>> try:
    ...     ensure_folder(os.path.join(base, "f", "sub"), "--out")
    ... except FileError as exc:
    ...     msg = str(exc)
    >>> msg.split(": ", 1)[1][:16], msg.endswith("a file, not a folder; give a folder.")
    ('--out lies under', True)
    """
    path = check_folder(path, what, allow_link=allow_link, error=error)
    try:
        if mode is None or os.path.isdir(path):
            os.makedirs(path, exist_ok=True)
        else:
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # a racing run made it: left as it is
                os.mkdir(path, mode & 0o700)  # never wider than the owner's, umask or not
                os.chmod(path, mode)
    except OSError as exc:
        raise error(f"{path}: cannot create {what} ({exc.strerror}).") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise error(f"{path}: cannot write into {what}.")
    return path


def write_outputs(folder, outputs, what="the output", *, folder_what="the output folder",
                  mode=None, exclusive=False, force_flag=None, error=FileError):
    """Write several shared outputs into ``folder``, each through :func:`write_file`.

    The folder is created first when missing, by :func:`ensure_folder` (which refuses a path
    that is, or lies under, a file).

    Parameters
    ----------
    folder : str or path-like
        The folder.
    outputs : dict of {str: (str, str or bytes)}
        ``{name: (file name, content)}``; text is written as UTF-8.
    what : str, default="the output"
        Whose outputs these are (``"the report"``), for messages: ``"the report's
        summary.csv"``.
    folder_what : str, default="the output folder"
        What the folder is (``"--out"``), for :func:`ensure_folder`'s messages.
    mode : int, default=None
        Permission bits; ``None``: ``output_mode(0o644)`` (an ordinary shared file).
    exclusive : bool, default=False
        Refuse to replace an existing file (a command without ``--force``).
    force_flag : str, default=None
        The flag that replaces an existing file, named in that refusal.
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    files : dict of {str: str}
        ``{name: path}`` of the files written.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._folders import write_outputs
    >>> folder = os.path.join(tempfile.mkdtemp(), "new")
    >>> files = write_outputs(folder, {"table": ("t.csv", "a,b\\n1,2\\n")}, "the audit")
    >>> os.path.basename(files["table"]), open(files["table"]).read().splitlines()
    ('t.csv', ['a,b', '1,2'])
    """
    folder = ensure_folder(folder, folder_what, error=error)
    files = {}
    for name, (filename, content) in outputs.items():
        files[name] = write_output(os.path.join(folder, filename), content,
                                   f"{what}'s {filename}", mode=mode, exclusive=exclusive,
                                   force_flag=force_flag, error=error)
    return files


def remove_written(folder, names, what="the folder", *, is_ours=None, keep_others=False,
                   error=FileError):
    """Remove the files ``names`` that skdc wrote into ``folder``, and nothing else.

    Before anything is removed, every entry of ``folder`` is checked: an entry whose name is not
    in ``names`` (unless ``keep_others``: it is then left alone), one that is not a regular
    file (a link, a folder, a pipe), or one that ``is_ours(path)`` does not recognise makes the
    whole call refuse, removing nothing. A missing ``folder`` is fine (nothing to remove). The
    folder itself stays.

    Parameters
    ----------
    folder : str or path-like
        The folder skdc filled.
    names : iterable of str
        The file names skdc writes there.
    what : str, default="the folder"
        What the folder is (``"--out/checkpoint"``), for messages.
    is_ours : callable, default=None
        ``is_ours(path) -> bool``: a last check that a file of ours is one skdc wrote (a
        checkpoint's first line, say).
    keep_others : bool, default=False
        Leave the entries not in ``names`` alone instead of refusing (a folder holding the
        user's own files beside skdc's, such as ``analyst fit --out``).
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    removed : list of str
        The names removed.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._folders import remove_written
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "grid.jsonl"), "w").close()
    >>> _ = open(os.path.join(folder, "w.pt"), "w").close()
    >>> try:
    ...     remove_written(folder, ["grid.jsonl"], "the checkpoint folder")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:50])
    the checkpoint folder holds w.pt, which skdc did n
    >>> sorted(os.listdir(folder))
    ['grid.jsonl', 'w.pt']
    """
    folder = os.fspath(folder)
    if not os.path.lexists(folder):
        return []
    if os.path.islink(folder) or not os.path.isdir(folder):
        raise error(f"{folder}: {what} is not a folder (a file or a link); skdc removes "
                    "nothing there. Remove it yourself or choose another folder.")
    names = set(names)
    ours = []
    for entry in sorted(os.listdir(folder)):
        full = os.path.join(folder, entry)
        if entry not in names and keep_others:
            continue
        if entry not in names:
            raise error(f"{folder}: {what} holds {entry}, which skdc did not write; refusing "
                        "to clear it. Move that file away or choose another folder.")
        st = os.lstat(full)
        if not stat.S_ISREG(st.st_mode) or (is_ours is not None and not is_ours(full)):
            kind = "a regular file" if stat.S_ISREG(st.st_mode) else file_kind(st.st_mode)
            raise error(f"{folder}: {what} holds {entry} ({kind}), which skdc did not write; "
                        "refusing to clear it. Move it away or choose another folder.")
        ours.append(entry)
    for entry in ours:
        os.unlink(os.path.join(folder, entry))
    return ours


# -- a folder of one run's outputs ----------------------------------------------------------
RUN_RECORD = "skdc-run.json"  # what a run that fills a folder leaves beside its outputs
_RUN_FORMAT = "skdc-run"
_RUN_RECORD_BYTES = 1 << 20


def _read_run_record(folder, record, names):
    """The record skdc left in ``folder``: ``(run, files)``, or ``None`` when there is none or
    it is not one skdc wrote (not a regular file, not JSON, another format). It is read
    without being noted as an input: the run rewrites it."""
    fh = peek_regular(os.path.join(folder, record))
    if fh is None:
        return None
    try:
        with fh:
            data = fh.read(_RUN_RECORD_BYTES + 1)
        doc = json.loads(data.decode("utf-8")) if len(data) <= _RUN_RECORD_BYTES else None
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == _RUN_FORMAT
            and isinstance(doc.get("run"), dict) and isinstance(doc.get("files"), list)):
        return None
    # a record names only files of the run's own kind, never a path elsewhere
    return doc["run"], [n for n in doc["files"] if isinstance(n, str) and n in names]


def check_run_folder(folder, run, names, what="the output folder", *, force=False,
                     force_flag="--force", record=RUN_RECORD, error=FileError):
    """Refuse, before a run, a folder that holds another run's outputs (unless ``force``).

    A run that fills a folder (the audit's report) leaves a record of itself beside its files
    (:func:`write_run_record`): the settings and data that make it that run, and the names it
    wrote. The folder holds another run's outputs when one of ``names`` (or the record) is
    there and the record describes another run, or is missing or damaged (no one can tell
    which run wrote them). The same run's outputs pass: a resumed or repeated run replaces
    its own files.

    Parameters
    ----------
    folder : str or path-like
        The output folder (it may not exist yet).
    run : dict
        JSON-serialisable, flat: what makes this run itself (its settings, a digest of its
        data), compared key by key with the record's.
    names : iterable of str
        Every file name this kind of run writes into ``folder``.
    what : str, default="the output folder"
        What the folder is (``"--out"``), for messages.
    force : bool, default=False
        Whether the command was given ``force_flag``: another run's files are then to be
        cleared, not refused.
    force_flag : str, default="--force"
        The flag named in the refusal.
    record : str, default="skdc-run.json"
        The record's file name.
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    earlier : list of str
        The names of another recorded run's files in ``folder`` (only with ``force``), which
        :func:`clear_run_folder` removes before this run writes; empty when the folder holds
        none, the same run's, or files no record describes (those this run writes are then
        replaced, the others left).

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._folders import check_run_folder, write_run_record
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "report.html"), "w").write("<p>seed 0</p>")
    >>> write_run_record(folder, {"seed": 0}, ["report.html"], "--out")
    >>> check_run_folder(folder, {"seed": 0}, ["report.html"], "--out")
    []
    >>> try:
    ...     check_run_folder(folder, {"seed": 1}, ["report.html"], "--out")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:74])
    --out holds another run's files (its record skdc-run.json differs in seed)
    >>> check_run_folder(folder, {"seed": 1}, ["report.html"], "--out", force=True)
    ['report.html']
    """
    folder, names = os.fspath(folder), set(names)
    if not os.path.isdir(folder):
        return []
    present = [n for n in sorted(names) if os.path.lexists(os.path.join(folder, n))]
    if not present and not os.path.lexists(os.path.join(folder, record)):
        return []
    found = _read_run_record(folder, record, names)
    run = json.loads(json.dumps(run))
    if found is not None and found[0] == run:
        return []
    if found is None:
        whose = (f"files no run record describes (no skdc {record} there says which run wrote "
                 "them)")
        earlier = []
    else:
        old = found[0]
        differ = sorted(k for k in set(old) | set(run) if old.get(k) != run.get(k))
        whose = f"another run's files (its record {record} differs in {', '.join(differ)})"
        earlier = [n for n in found[1] if os.path.lexists(os.path.join(folder, n))]
    if not force:
        listed = ", ".join(present or [record])
        clears = ("clear that run's files" if found is not None
                  else "replace the ones this run writes")
        raise error(f"{folder}: {what} holds {whose}: {listed}; refusing to replace them. "
                    f"Pass {force_flag} to {clears} and write this run's, or choose another "
                    "folder.")
    for name in earlier:  # an input of this command, or a secret, is never cleared
        check_output(os.path.join(folder, name), f"{what}'s {name}", error=error)
    return earlier


def clear_run_folder(folder, earlier, what="the output folder", *, error=FileError):
    """Remove another run's files ``earlier`` (from :func:`check_run_folder`) from ``folder``.

    Each is checked first as an output would be (:func:`check_output`): one of the command's
    inputs, or an skdc file of another kind, is refused and nothing removed; only regular
    files are removed (:func:`remove_written`). Returns the names removed.
    """
    folder = os.fspath(folder)
    for name in earlier:
        check_output(os.path.join(folder, name), f"{what}'s {name}", error=error)
    return remove_written(folder, earlier, what, keep_others=True, error=error)


def write_run_record(folder, run, files, what="the output folder", *, record=RUN_RECORD,
                     error=FileError):
    """Leave the record of ``run`` and the ``files`` it wrote in ``folder`` (see
    :func:`check_run_folder`), written whole as an ordinary shared file."""
    doc = {"format": _RUN_FORMAT, "run": run,
           "files": sorted({os.path.basename(os.fspath(f)) for f in files})}
    write_output(os.path.join(os.fspath(folder), record), json.dumps(doc, indent=1) + "\n",
                 f"{what}'s {record}", error=error)
