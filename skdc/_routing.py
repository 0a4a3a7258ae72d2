"""Participant ids for a pipeline, with or without scikit-learn's metadata routing.

``Pipeline.fit(X, y, participant=ids)`` works only under
``sklearn.set_config(enable_metadata_routing=True)``; without it scikit-learn stops before any
skdc code runs, with a message about ``logisticregression__sample_weight``. The step-prefixed
form ``gdp__participant=ids`` always works. :func:`participant_fit_params` returns whichever of
the two the current configuration needs.
"""

# Licence: BSD 3 clause

from .utils._sklearn_compat import HasMethods, validate_params

__all__ = ["participant_fit_params"]


def _mechanism_paths(estimator, prefix=""):
    """``step__...__`` prefixes of every skdc mechanism inside (nested) pipelines."""
    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV

    from .mechanisms import BaseMechanism

    if isinstance(estimator, BaseMechanism):
        yield prefix
    elif isinstance(estimator, (GridSearchCV, RandomizedSearchCV)):  # fit params pass through
        yield from _mechanism_paths(estimator.estimator, prefix)
    for name, step in getattr(estimator, "steps", None) or []:
        if step is not None and step != "passthrough":
            yield from _mechanism_paths(step, f"{prefix}{name}__")


@validate_params(
    {"estimator": [HasMethods(["fit"])], "participant": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def participant_fit_params(estimator, participant):
    """The ``fit`` keyword arguments that give ``participant`` ids to an skdc mechanism.

    With metadata routing on (``sklearn.set_config(enable_metadata_routing=True)``), that is
    ``{"participant": participant}``: the pipeline routes it to every step that requests it.
    Without routing, scikit-learn refuses ``Pipeline.fit(X, y, participant=ids)`` with
    "Pipeline.fit does not accept the participant parameter", so the ids are addressed to each
    mechanism step by name, ``{"gdp__participant": participant}`` (nested pipelines and a
    search over a pipeline included).

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    estimator : estimator
        A pipeline (or a search over one) holding an skdc mechanism, or a mechanism.
    participant : array-like of int of shape (n_samples,)
        The participant of each training row.

    Returns
    -------
    fit_params : dict
        Pass it as ``estimator.fit(X, y, **fit_params)``.

    Raises
    ------
    ValueError
        When ``estimator`` holds no skdc mechanism, so the ids would reach no step.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import Pipeline
    >>> from skdc import IGDP, ReferenceAligner, participant_fit_params
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.randn(60, 4), np.arange(60) % 2
    >>> ids = np.arange(60) % 3
    >>> pipe = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", ReferenceAligner()),
    ...                  ("clf", LogisticRegression())])
    >>> list(participant_fit_params(pipe, ids))
    ['gdp__participant']
    >>> pipe.fit(X, y, **participant_fit_params(pipe, ids)).predict(X[:3]).shape
    (3,)
    """
    import sklearn

    paths = list(_mechanism_paths(estimator))
    if not paths:
        raise ValueError(
            f"{type(estimator).__name__} holds no skdc mechanism (IGDP, CGDP, UMAPMechanism, "
            "...), so participant ids would reach no step. Put the mechanism in the pipeline, "
            "or fit without participant ids."
        )
    if sklearn.get_config()["enable_metadata_routing"] or paths == [""]:
        return {"participant": participant}
    return {f"{path}participant": participant for path in paths}
