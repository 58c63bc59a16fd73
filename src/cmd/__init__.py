"""Entry points (Go `cmd/*`): flags and environment variables map onto settings here, nowhere else."""
