"""The zoo's op menu (issue 42's zoo action space): menu.json is what benchmarks/scripts/zoo_menu.py writes from the
zoo's signatures and the committed results store, lists every public op with a signature it really has, and is
found through the ``cudal1.op_menus`` entry point."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import cudal1.kernelzoo as zoo
from cudal1.kernelzoo.menu import MENU_FILE, menu_op_names
from cudal1.prompts.menu import installed_menus, load_menu, names_imported_from

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_menu_is_what_the_script_writes(load_script):
    script = load_script("benchmarks/scripts/zoo_menu.py")
    assert MENU_FILE.read_text() == script.render(), "menu.json is stale: run benchmarks/scripts/zoo_menu.py"


def test_every_public_op_is_on_the_menu_with_its_own_parameters():
    doc = json.loads(MENU_FILE.read_text())
    ops = {o["name"]: o for o in doc["ops"]}
    assert list(ops) == menu_op_names() and len(ops) > 40
    assert not any(n.endswith("_ref") for n in ops)
    for name, op in ops.items():
        params = list(inspect.signature(getattr(zoo, name)).parameters)
        assert op["signature"].startswith(f"{name}(") and all(p in op["signature"] for p in params), op
        assert op["import"] == f"from cudal1.kernelzoo import {name}" and op["summary"], op
    assert doc["source"]["gpu"].startswith("NVIDIA") and doc["source"]["baseline"] == "eager"
    page = ROOT / doc["source"]["page"]
    assert page.is_file(), page


def test_measurements_are_those_of_solutions_that_import_the_op():
    ops = {o["name"]: o for o in json.loads(MENU_FILE.read_text())["ops"]}
    assert {m["task"] for m in ops["bias_relu_max_pool2d"]["measured"]} == {"conv2d_relu_maxpool"}
    assert all(m["ci"][0] <= m["speedup"] <= m["ci"][1] for o in ops.values() for m in o["measured"])
    assert names_imported_from("from cudal1.kernelzoo.ops.bias_act import bias_act_\nfrom torch import relu\n",
                               "cudal1.kernelzoo") == {"bias_act_"}
    assert names_imported_from("def broken(:", "cudal1.kernelzoo") == set()


def test_the_entry_point_finds_the_menu():
    assert "kernelzoo" in installed_menus()
    assert load_menu("kernelzoo").names() == menu_op_names()
