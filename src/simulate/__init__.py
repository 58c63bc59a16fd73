"""`agones simulate`: replay allocation demand against the real controllers on virtual time."""
