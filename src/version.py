"""The build version, written into `agones.dev/sdk-version` annotations as Agones writes its own."""

# Agones stamps the binary's build version; ours tracks the Agones release we port.
VERSION = "1.57.0-py"
