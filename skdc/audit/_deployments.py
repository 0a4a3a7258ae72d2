"""Fresh deployments: the pipelines the audit and the comparison deploy (a mechanism, an
aligner and the model), the attacks that apply to each, the model's class weights, and the
noise range a calibration searches by default."""

# Licence: BSD 3 clause

import numpy as np

# (mechanism, aligner) -> (noise parameter, attacks that apply under analyst-participant
# collusion): the noisy-anchor paper's choice (its section 7.2). The one place the audit's and
# the comparison's attack sets are defined: every applicable attack runs, and each draw is
# judged by the strongest.
_DEPLOYMENTS = {
    ("igdp", "gopp"): ("align__v", ("mp", "procrustes", "alignment_map", "sample_axes",
                                    "joint_likelihood")),
    ("cgdp", "none"): ("gdp__noise", ("known_secret",)),
}
# the labels are imbalanced when the smallest class holds less than this share of an even
# split (below 40% of the rows for two classes): the audit's own models then weigh the classes
# alike (class_weight="balanced"), or an unweighted model predicts the commonest label only
_IMBALANCED = 0.8


def _model(model, params=None):
    """The estimator ``model`` names (a given estimator is cloned when ``params`` set some of
    its parameters, never changed in place)."""
    if model == "logistic":
        from sklearn.linear_model import LogisticRegression

        est = LogisticRegression(max_iter=1000)
    elif model == "ridge":
        from sklearn.linear_model import RidgeClassifier

        est = RidgeClassifier()
    elif hasattr(model, "fit"):
        if not params:
            return model
        from sklearn.base import clone

        est = clone(model)
    else:
        raise ValueError(f"model must be 'logistic', 'ridge' or an estimator; got "
                         f"{model!r}.")
    if params:
        try:
            est.set_params(**params)
        except ValueError as exc:  # sklearn: "Invalid parameter 'foo' for estimator ..."
            raise ValueError(f"model_params= sets {sorted(params)}: "
                             f"{' '.join(str(exc).split())}") from None
    return est


def _labels(y):
    """The labels' classes in numbers: ``n_classes``, ``majority_share`` (the commonest
    label's share of the rows), ``smallest_share`` and ``imbalanced`` (the smallest class
    below ``_IMBALANCED`` of an even share)."""
    _, counts = np.unique(y, return_counts=True)
    shares = counts / counts.sum()
    return {"n_classes": int(counts.size), "majority_share": float(shares.max()),
            "smallest_share": float(shares.min()),
            "imbalanced": bool(shares.min() < _IMBALANCED / counts.size)}


def _model_params(model, model_params, labels):
    """``(params, balanced)``: the parameters set on the utility model, with
    ``class_weight="balanced"`` added when the labels are imbalanced, ``model`` is one of the
    audit's own (a given estimator is the user's, taken as configured) and ``model_params``
    does not set ``class_weight``; ``balanced`` says whether it was added."""
    params = dict(model_params or {})
    if not all(isinstance(k, str) and k.isidentifier() for k in params):
        raise ValueError(f"model_params must map parameter names to values; got "
                         f"{sorted(map(repr, params))}.")
    balanced = (isinstance(model, str) and labels["imbalanced"]
                and "class_weight" not in params)
    if balanced:
        params["class_weight"] = "balanced"
    return params, balanced


def _pipeline(mechanism, aligner, n_participants, model, seed, n_anchors=None):
    from sklearn.pipeline import Pipeline

    from ..alignment import GOPPAligner
    from ..mechanisms import CGDP, IGDP

    kw = {} if aligner != "gopp" or n_anchors is None else {"n_anchors": int(n_anchors)}
    mech = {"igdp": IGDP, "cgdp": CGDP}[mechanism](n_participants, random_state=seed, **kw)
    steps = [("gdp", mech)]
    if aligner == "gopp":
        steps.append(("align", GOPPAligner()))
    steps.append(("clf", _model(model)))
    return Pipeline(steps)


def _default_bounds(param, n_participants, X, n_anchors=None):
    from ..alignment import v_phase_transition

    d = X.shape[1]
    if param.endswith("__v"):
        r = 4 * d if n_anchors is None else int(n_anchors)
        return 0.0, 3.0 * v_phase_transition(max(n_participants, 2), d, r)
    rms = float(np.sqrt(np.mean(np.asarray(X, dtype=np.float64) ** 2)))
    return 0.0, 4.0 * rms
