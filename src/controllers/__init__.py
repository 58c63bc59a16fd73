"""Agones' controllers (`pkg/gameservers`, `pkg/gameserversets`, ...), one package per resource."""
