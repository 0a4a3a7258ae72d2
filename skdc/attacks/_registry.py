"""The attacks by name: the registry from an attack's name to an attack instance.

A name stands for an attack class and its defaults (``'mp'`` and ``'procrustes'`` are
:class:`KnownAnchorAttack` with ``estimator='mp'`` and ``estimator='procrustes'``), so that a
scorer (:func:`skdc.metrics.make_attack_scorer`), the audit, a sweep's config and the command
line name attacks with plain strings. :func:`make_attack` makes the attack a name stands for;
:func:`get_attack_names` lists the names.
"""

# Licence: BSD 3 clause

from ..utils._sklearn_compat import StrOptions, validate_params
from ._classical import ICAAttack, KnownInputAttack, KnownSampleAttack
from ._dc import AnchorRegressionAttack
from ._gdp import AlignmentMapAttack, KnownAnchorAttack, KnownSecretAttack
from ._joint_likelihood import JointLikelihoodAttack
from ._sample_axes import SampleAxesAttack

__all__ = ["get_attack_names", "make_attack"]

_ATTACKS = {
    "known_secret": (KnownSecretAttack, {}),
    "known_anchor": (KnownAnchorAttack, {"estimator": "exact"}),
    "mp": (KnownAnchorAttack, {"estimator": "mp"}),
    "procrustes": (KnownAnchorAttack, {"estimator": "procrustes"}),
    "alignment_map": (AlignmentMapAttack, {}),
    "known_input": (KnownInputAttack, {}),
    "known_sample": (KnownSampleAttack, {}),
    "ica": (ICAAttack, {}),
    "anchor_regression": (AnchorRegressionAttack, {}),
    "sample_axes": (SampleAxesAttack, {}),
    "joint_likelihood": (JointLikelihoodAttack, {}),
}


def get_attack_names():
    """The names :func:`make_attack` (and :func:`skdc.metrics.make_attack_scorer`) accept.

    Returns
    -------
    names : list of str
        The attack names, sorted.

    Examples
    --------
    >>> from skdc.attacks import get_attack_names
    >>> "procrustes" in get_attack_names()
    True
    """
    return sorted(_ATTACKS)


@validate_params({"attack": [StrOptions(set(_ATTACKS))]}, prefer_skip_nested_validation=True)
def make_attack(attack, **params):
    """The attack object a name stands for (the names of :func:`~skdc.metrics.make_attack_scorer`).

    Read more in the :ref:`User Guide <what_an_attacker_knows>`.

    Parameters
    ----------
    attack : str
        One of ``'known_secret'``, ``'known_anchor'``, ``'mp'``, ``'procrustes'``,
        ``'alignment_map'``, ``'known_input'``, ``'known_sample'``, ``'ica'``,
        ``'anchor_regression'``, ``'sample_axes'``, ``'joint_likelihood'``.
    **params : dict
        Parameters of the attack, over the name's defaults.

    Returns
    -------
    attack : BaseAttack
        The unfitted attack, with a ``reconstruct(view)`` method.

    Examples
    --------
    >>> from skdc.attacks import make_attack
    >>> make_attack("procrustes")
    KnownAnchorAttack(estimator='procrustes')
    """
    cls, defaults = _ATTACKS[attack]
    return cls(**{**defaults, **params})
