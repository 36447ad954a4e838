"""The two roles' sessions (worker side): each answers the shared commands and its own, and refuses the other
role's, so a reference worker can never be asked to import candidate code and a candidate worker never sets up the
task's reference."""

from __future__ import annotations

import pytest

from cudal1.harness.candidate_session import CandidateSession
from cudal1.harness.reference_session import ReferenceSession
from cudal1.harness.session import Session


@pytest.mark.parametrize("cls, own, refused", [
    (ReferenceSession, {"setup", "configure", "monitor"}, ["load", "observe", "check"]),
    (CandidateSession, {"load", "observe", "check"}, ["setup", "configure", "monitor"]),
])
def test_each_role_refuses_the_other_roles_commands(tmp_path, cls, own, refused):
    ses = cls(tmp_path, tmp_path / "outbox")
    assert cls.ROLE_COMMANDS == own and all(callable(getattr(ses, op)) for op in own | Session.SHARED_COMMANDS)
    for op in [*refused, "shutdown", None]:
        rep = ses.handle({"op": op, "source": "import os"})
        assert rep["type"] == "error" and rep["flag"] == "harness_error", rep
        assert f"unknown command {op!r} for a {cls.role} worker" in rep["reason"]


def test_a_session_has_a_role():
    with pytest.raises(TypeError, match="ReferenceSession or a CandidateSession"):
        Session("/tmp", "/tmp")


def test_failures_are_told_as_each_role_tells_them(tmp_path):
    """A model that raises is the task's error in the reference's process and the candidate's runtime error in
    the candidate's (the parent then blames the right side)."""
    boom = {"op": "trial", "seed": 1, "calls": 1, "name": "t"}
    for cls, status, who in [(ReferenceSession, "task_error", "the reference"),
                              (CandidateSession, "runtime_error", "ModelNew.forward")]:
        ses = cls(tmp_path, tmp_path / "outbox")
        ses.inp_mod = type("Inputs", (), {"get_inputs": staticmethod(lambda: [])})
        ses.model = lambda: 1 / 0
        rep = ses.handle(boom)
        assert rep["type"] == "error" and rep["status"] == status and rep["reason"].startswith(f"{who} raised"), rep
