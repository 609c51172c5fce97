"""`python -m agent_cli` runs the same CLI as the `agent` script."""

from agent_cli.cli import main

if __name__ == "__main__":
    main()
