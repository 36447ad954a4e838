"""The examples in every rewards module's docstrings run."""

import doctest
import importlib

import pytest

MODULES = ["shaping", "rounding", "smoothing", "suspicion", "fingerprint", "hack_store", "checker"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(f"cudal1.rewards.{name}")
    failed, attempted = doctest.testmod(mod)
    assert attempted > 0 and failed == 0
