"""How a command is confined (SPEC §14): bubblewrap, else Landlock with seccomp, else none.

`plan.py` says what a command may touch, `launch.py` picks the mechanism and
starts a process in it; `bwrap.py`, `landlock.py` (with `guard.py`) and
`seccomp.py` are the mechanisms; `failures.py` reads a refusal from output.
"""
