"""The controllers the local cluster runs in place of kube-controller-manager's, as clients of the
API server over HTTP on the framework's informers: Deployments (`deployment`), ReplicaSets
(`replicaset`) and Endpoints/EndpointSlices (`endpoints`). The garbage collector, namespace and
event-TTL controllers work on the registry in-process and live with the API server
(`apiserver.embedded_controllers`).
"""
