"""Participant-side mechanisms: what each participant runs on its own rows before uploading."""

from ._anchor_noise import add_anchor_noise
from ._base import BaseMechanism
from ._gaussmix import GaussMix
from ._gdp import CGDP, GDP, IGDP

__all__ = ["BaseMechanism", "CGDP", "GDP", "GaussMix", "IGDP", "add_anchor_noise"]
