"""Held-out splits (issue 42, item 3): the family split and the composition split, each checked; a composition split
that holds out a primitive no train task has, or a combination some train task has, is refused with the task and
the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudal1.harness import load_suite
from cudal1.policy.recipe import RecipeError, load_recipe
from cudal1.policy.splits import (
    BUILTIN_FAMILIES,
    BUILTIN_PRIMITIVES,
    COMPOSITION_SPLITS,
    SplitError,
    composition_split,
    split,
    split_names,
)

CONFIGS = Path(__file__).resolve().parents[2] / "apps" / "configs"


def test_every_builtin_task_has_a_family_and_primitives():
    names = {t.name for t in load_suite("builtin")}
    assert {t for fam in BUILTIN_FAMILIES.values() for t in fam} == names == set(BUILTIN_PRIMITIVES)
    assert all(BUILTIN_PRIMITIVES[t] for t in names)


def test_the_composition_split_holds_out_new_combinations_of_trained_primitives():
    s = split("builtin-compose-v1")
    assert s.kind == "composition" and set(s.held_out) == set(COMPOSITION_SPLITS["builtin-compose-v1"])
    assert not set(s.train) & set(s.held_out) and len(s.train) + len(s.held_out) == len(BUILTIN_PRIMITIVES)
    taught = set().union(*(BUILTIN_PRIMITIVES[t] for t in s.train))
    for t in s.held_out:
        assert BUILTIN_PRIMITIVES[t] <= taught and len(BUILTIN_PRIMITIVES[t]) >= 2
        assert not any(BUILTIN_PRIMITIVES[t] <= BUILTIN_PRIMITIVES[u] for u in s.train)
    assert split("builtin-v1").kind == "family" and split_names() == ["builtin-compose-v1", "builtin-v1"]


def test_a_held_out_primitive_no_train_task_has_is_refused():
    with pytest.raises(SplitError, match=r"embedding_add_layernorm uses primitive\(s\) \['embedding'\] that no train"):
        composition_split("mine", ["embedding_add_layernorm"])


def test_a_combination_a_train_task_already_has_is_refused():
    # conv2d + relu + max-pool is also vgg_conv_stack's combination: holding out one of them alone tests nothing new
    with pytest.raises(SplitError, match=r"conv2d_relu_maxpool combines .* train task\(s\) \['vgg_conv_stack'\]"):
        composition_split("mine", ["conv2d_relu_maxpool"])
    assert composition_split("mine", ["conv2d_relu_maxpool", "vgg_conv_stack"]).held_out == (
        "conv2d_relu_maxpool", "vgg_conv_stack")


def test_unknown_tasks_and_splits_are_refused_with_the_known_ones():
    with pytest.raises(SplitError, match="no task"):
        composition_split("mine", ["no_such_task"])
    with pytest.raises(SplitError, match="known splits: builtin-compose-v1, builtin-v1"):
        split("builtin-v9")
    with pytest.raises(RecipeError, match="tasks.split: unknown split"):
        load_recipe("default", ["tasks.split=builtin-v9"], configs_dir=CONFIGS)


def test_a_recipe_trains_and_evaluates_on_the_composition_split():
    from cudal1.policy.tasks import train_and_held_out

    r = load_recipe("default", ["tasks.split=builtin-compose-v1", "tasks.names=[relu,softmax]",
                                "evaluation.names=[gemm_swiglu]"], configs_dir=CONFIGS)
    tasks, held = train_and_held_out(r.tasks, r.evaluation.names)
    assert [t.name for t in tasks] == ["relu", "softmax"] and [t.name for t in held] == ["gemm_swiglu"]
