"""kube_emulator: a Kubernetes API emulator for end-to-end tests (see emulator/README.md)."""
