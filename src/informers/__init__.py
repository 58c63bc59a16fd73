"""Shared informers, reflector, stores and listers (client-go `tools/cache`)."""
