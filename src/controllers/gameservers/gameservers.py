"""Pure helpers shared by the GameServer controllers (Agones `pkg/gameservers/gameservers.go`).

Pods and Nodes are the typed read models of `apis.core.v1` (what the informers cache), GameServers
the typed `GameServer`. Nothing here
does I/O or mutates its inputs, except `apply_game_server_address_and_port`, which assigns status
fields of the GameServer copy it is given (a `with_own_status` copy will do).
"""

from __future__ import annotations

import ipaddress

import msgspec
from msgspec import UNSET

from ...apis.agones.v1.gameserver import (
    GAME_SERVER_LABEL_ROLE,
    NODE_POD_IP,
    ROLE_LABEL,
    GameServer,
    GameServerState,
    GameServerStatus,
    NodeAddress,
    port_status,
)
from ...apis.core.v1 import Node, Pod
from ...apis.meta.objectmeta import controller_of
from ...featuregates import FeatureGates

_GS_DECODER = msgspec.json.Decoder(GameServer)
_ENCODER = msgspec.json.Encoder()


class AddressError(ValueError):
    """A node has no usable address."""


def deep_copy(gs: GameServer) -> GameServer:
    """A private copy of a (shared, cached) GameServer."""
    return _GS_DECODER.decode(_ENCODER.encode(gs))


def with_own_status(gs: GameServer) -> GameServer:
    """A copy of `gs` with a status of its own (a shallow copy of it), sharing everything else:
    what a step that only assigns status fields needs, at a fraction of `deep_copy`'s cost.
    Only the copy's status fields may be assigned; nothing else reachable from it is private."""
    status = gs.status if gs.status is not UNSET else GameServerStatus()
    return msgspec.structs.replace(gs, status=msgspec.structs.replace(status))


def with_own_metadata(gs: GameServer) -> GameServer:
    """As `with_own_status`, for a step that only assigns fields of `metadata`."""
    return msgspec.structs.replace(gs, metadata=msgspec.structs.replace(gs.meta))


def is_game_server_pod(pod: Pod) -> bool:
    """A pod labelled `agones.dev/role=gameserver` whose controller is a GameServer."""
    if pod.metadata.get_labels().get(ROLE_LABEL) != GAME_SERVER_LABEL_ROLE:
        return False
    owner = controller_of(pod.metadata)
    return owner is not None and owner.kind == "GameServer"


def is_controlled_by(pod: Pod, gs: GameServer) -> bool:
    owner = controller_of(pod.metadata)
    uid = gs.metadata.uid if gs.metadata is not UNSET else UNSET
    return owner is not None and owner.uid == uid


def pod_node_name(pod: Pod) -> str:
    return pod.node_name()


def pod_ips(pod: Pod) -> list[str]:
    return pod.pod_ips()


def is_being_deleted(obj: Pod | Node) -> bool:
    return obj.metadata.is_being_deleted()


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def node_addresses(node: Node) -> list[tuple[str, str]]:
    return node.addresses()


def address(node: Node) -> str:
    """The GameServer's address on this node: ExternalDNS, else ExternalIP, else InternalDNS, else
    InternalIP (IP types only when they parse as IPs); `AddressError` when there is none."""
    addresses = node_addresses(node)
    for wanted, must_be_ip in (
        ("ExternalDNS", False),
        ("ExternalIP", True),
        ("InternalDNS", False),
        ("InternalIP", True),
    ):
        for kind, addr in addresses:
            if kind == wanted and (not must_be_ip or _is_ip(addr)):
                return addr
    name = node.metadata.get_name()
    raise AddressError(f"Could not find an address for Node: {name}")


def apply_game_server_address_and_port(
    gs: GameServer, node: Node, pod: Pod, gates: FeatureGates
) -> GameServer:
    """Fill address, addresses (node's, then one PodIP per pod IP), node name and ports."""
    try:
        addr = address(node)
    except AddressError as err:
        raise AddressError(
            f"error getting external address for GameServer {gs.meta.get_name()}: {err}"
        ) from None
    status = gs.gs_status
    status.address = addr
    status.node_name = pod_node_name(pod)
    status.addresses = [NodeAddress(type=t, address=a) for t, a in node_addresses(node)] + [
        NodeAddress(type=NODE_POD_IP, address=ip) for ip in pod_ips(pod)
    ]
    status.ports = [port_status(p, gates) for p in gs.ports()]
    return gs


def is_before_pod_created(gs: GameServer) -> bool:
    """PortAllocation, Creating or Starting: the pod may not exist (in the cache) yet."""
    return gs.state() in (
        GameServerState.PORT_ALLOCATION,
        GameServerState.CREATING,
        GameServerState.STARTING,
    )
