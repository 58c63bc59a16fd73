"""Unit tests of the local API server's pure parts."""
