"""The plan as text: the checklist a person reads and edits, read back (issue 16)."""

from __future__ import annotations

from agent_cli.frontends.plan_text import checklist, implement_message, parse_checklist, progress
from agent_cli.tools.plan import Plan, PlanStep

PLAN = Plan(
    (
        PlanStep("Read the parser", "completed"),
        PlanStep("Fix the off-by-one", "in_progress"),
        PlanStep("Run the tests", "pending"),
    ),
    "Small change.",
)


def test_the_checklist_reads_back_as_the_same_plan():
    text = checklist(PLAN)
    assert text == (
        "- [x] Read the parser\n- [~] Fix the off-by-one\n- [ ] Run the tests\n\nSmall change."
    )
    assert parse_checklist(text) == PLAN
    assert progress(PLAN) == "Plan 1/3"


def test_an_edited_checklist_may_use_any_list_style_and_notes():
    edited = "Do it in this order:\n1. [ ] first\n* second\n+ [X] third\n- [>] fourth\n"
    plan = parse_checklist(edited)
    assert plan is not None
    assert [(s.step, s.status) for s in plan.steps] == [
        ("first", "pending"),
        ("second", "pending"),
        ("third", "completed"),
        ("fourth", "in_progress"),
    ]
    assert plan.explanation == "Do it in this order:"
    assert parse_checklist("just some words") is None


def test_the_message_that_carries_a_plan_out_says_whether_it_was_edited():
    assert implement_message(" - [ ] a \n").startswith("Carry out this plan now")
    assert implement_message("- [ ] a", edited=True).endswith("update_plan:\n\n- [ ] a")
