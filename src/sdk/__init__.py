"""Python game-server SDK for Agones (see docs/sdk.md)."""
