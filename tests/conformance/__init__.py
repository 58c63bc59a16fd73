"""API conformance suite: passes against the local server and, unchanged, against a real cluster."""
