"""The core (legacy, `""`) API group, as the controllers read it."""
