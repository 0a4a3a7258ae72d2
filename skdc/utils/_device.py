"""Which torch device to compute on, checked before any work starts."""

# Licence: BSD 3 clause

__all__ = ["resolve_device"]


def resolve_device(device="auto"):
    """Return the torch device to compute on (skdc.nn nets, the entropy bound).

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    device : str, torch.device or None, default='auto'
        ``'auto'`` gives ``'cuda'`` when ``torch.cuda.is_available()`` and ``'cpu'`` otherwise;
        ``None`` leaves tensors where they are (skorch's convention); anything else is checked
        and returned as given.

    Returns
    -------
    device : str, torch.device or None
        The device to use.

    Raises
    ------
    ValueError
        If CUDA is requested and torch sees no CUDA device, or the name is not a device.

    Examples
    --------
    >>> from skdc.nn import resolve_device
    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("auto") in ("cpu", "cuda")
    True
    """
    import torch

    if device is None:
        return None
    if isinstance(device, str) and device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            f"device must be 'auto', 'cpu', 'cuda', 'cuda:<index>' or a torch.device; got "
            f"{device!r}."
        ) from exc
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but torch sees no CUDA device. Use "
            "device='auto' (CUDA when available, else CPU) or device='cpu'."
        )
    return device
