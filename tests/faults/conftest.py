"""The fault tests run the real CLI against the loopback model server in a fresh folder."""

from tests.support.fixtures import fake, workspace

__all__ = ["fake", "workspace"]
