"""The simulated nodes: the scheduler that binds pods to them, the kubelets that run the bound pods as
local processes or in-process simulations (`kubelet`, `simulated`, `spawn`, `podfiles`), the pod
network namespaces (`netns`) and the userspace kube-proxy for Service addresses (`serviceproxy`).
They talk to the API server over HTTP only, as real nodes do.
"""
