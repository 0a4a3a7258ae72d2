"""A progress bar for long loops, shown only where someone is watching."""

# Licence: BSD 3 clause

import sys

__all__ = ["progress_bar"]


def progress_bar(iterable, progress="auto", **tqdm_kwargs):
    """Wrap ``iterable`` in a tqdm bar when ``progress`` asks for one.

    Parameters
    ----------
    iterable : iterable
        What the loop runs over.
    progress : bool or "auto", default="auto"
        ``True`` shows the bar (tqdm must be installed), ``False`` never does, ``"auto"``
        shows it when standard error is a terminal and tqdm is installed.
    **tqdm_kwargs
        Passed to ``tqdm`` (``total``, ``desc``, ``unit``...).

    Returns
    -------
    iterable
        ``iterable`` itself, or the tqdm bar over it.
    """
    if progress == "auto":
        progress = sys.stderr.isatty()
        try:
            import tqdm  # noqa: F401
        except ImportError:
            progress = False
    if not progress:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError as exc:
        raise ImportError(
            "progress=True needs tqdm: pip install 'skdc[experiments]' (or pip install tqdm), "
            "or pass progress=False."
        ) from exc
    return tqdm(iterable, **tqdm_kwargs)
