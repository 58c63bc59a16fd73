import base64
import datetime as dt
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agones.apis.autoscaling.v1.validation import append_certs_from_pem
from agones.featuregates import DEFAULT_GATES, FeatureGates
from tests.unit.apis.autoscaling.helpers import NOW, admit, buffer_spec, causes, fas

NO_COUNTS = DEFAULT_GATES.with_values(CountsAndLists=False)
NO_SCHEDULE = DEFAULT_GATES.with_values(ScheduledAutoscaler=False)
WASM = DEFAULT_GATES.with_values(WasmAutoscaler=True)

INV = "FieldValueInvalid"
REQ = "FieldValueRequired"
FORB = "FieldValueForbidden"
DUP = "FieldValueDuplicate"
UNSUP = "FieldValueNotSupported"
TOO_LONG = "FieldValueTooLong"


def policy(type_: str, **sub: Any) -> dict[str, Any]:
    return {"fleetName": "fleet", "policy": {"type": type_, **sub}}


def counter(**fields: Any) -> dict[str, Any]:
    body = {"key": "rooms", "bufferSize": 5, "minCapacity": 10, "maxCapacity": 100}
    body.update(fields)
    return policy("Counter", counter=body)


def lst(**fields: Any) -> dict[str, Any]:
    body = {"key": "players", "bufferSize": 5, "minCapacity": 10, "maxCapacity": 100}
    body.update(fields)
    return policy("List", list=body)


BUFFER = {"type": "Buffer", "buffer": {"bufferSize": 5, "minReplicas": 10, "maxReplicas": 20}}


def schedule(between: Any = None, **period: Any) -> dict[str, Any]:
    active = {"timezone": "America/New_York", "startCron": "0 1 * * 0", "duration": "5h"}
    active.update(period)
    body: dict[str, Any] = {"activePeriod": active, "policy": BUFFER}
    body["between"] = (
        between
        if between is not None
        else {
            "start": "2100-01-01T00:00:00Z",
            "end": "2100-02-01T00:00:00Z",
        }
    )
    return policy("Schedule", schedule=body)


def chain(*entries: dict[str, Any]) -> dict[str, Any]:
    return policy("Chain", chain=list(entries))


def webhook(**conf: Any) -> dict[str, Any]:
    return policy("Webhook", webhook=conf)


def wasm(**conf: Any) -> dict[str, Any]:
    return policy("Wasm", wasm=conf)


NOT_A_CERT = base64.b64encode(b"not").decode()


@pytest.mark.parametrize(
    ("spec", "gates", "expected"),
    [
        # -- Buffer
        pytest.param(buffer_spec(), DEFAULT_GATES, [], id="buffer-ok"),
        pytest.param(
            buffer_spec(bufferSize="50%", minReplicas=1), DEFAULT_GATES, [], id="buffer-percent-ok"
        ),
        pytest.param(
            buffer_spec(minReplicas=30),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.minReplicas",
                    INV,
                    "Invalid value: 30: minReplicas should be smaller than maxReplicas",
                )
            ],
            id="buffer-min-above-max",
        ),
        pytest.param(
            buffer_spec(bufferSize=0),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.bufferSize",
                    INV,
                    "Invalid value: 0: must be greater than or equal to 0",
                )
            ],
            id="buffer-size-zero-quirk",
        ),
        pytest.param(
            buffer_spec(bufferSize=25),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.maxReplicas",
                    INV,
                    "Invalid value: 20: maxReplicas should be bigger than or equal to bufferSize",
                ),
                (
                    "spec.policy.buffer.minReplicas",
                    INV,
                    "Invalid value: 10: minReplicas should be bigger than or equal to bufferSize",
                ),
            ],
            id="buffer-size-above-bounds",
        ),
        pytest.param(
            buffer_spec(bufferSize=15, minReplicas=0),
            DEFAULT_GATES,
            [],
            id="buffer-min-zero-ignored",
        ),
        pytest.param(
            buffer_spec(bufferSize="0%"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.bufferSize",
                    INV,
                    'Invalid value: "0%": bufferSize should be between 1% and 99%',
                )
            ],
            id="buffer-percent-zero",
        ),
        pytest.param(
            buffer_spec(bufferSize="100%"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.bufferSize",
                    INV,
                    'Invalid value: "100%": bufferSize should be between 1% and 99%',
                )
            ],
            id="buffer-percent-100",
        ),
        pytest.param(
            buffer_spec(bufferSize="ten"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.bufferSize",
                    INV,
                    'Invalid value: "ten": bufferSize should be between 1% and 99%',
                )
            ],
            id="buffer-string-not-percent",
        ),
        pytest.param(
            buffer_spec(bufferSize="10%", minReplicas=0),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.minReplicas",
                    INV,
                    "Invalid value: 0: must be greater than or equal to 0",
                )
            ],
            id="buffer-percent-needs-min-quirk",
        ),
        pytest.param(
            policy("Buffer"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer",
                    REQ,
                    "Required value: buffer policy config params are missing",
                )
            ],
            id="buffer-missing",
        ),
        pytest.param(
            buffer_spec(maxReplicas=0, bufferSize=0, minReplicas=0),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.maxReplicas",
                    INV,
                    "Invalid value: 0: spec.policy.buffer.maxReplicas in body should be greater than or equal to 1",
                )
            ],
            id="schema-max-replicas-min-1",
        ),
        pytest.param(
            {"fleetName": "fleet", "policy": {"type": "Buffer", "buffer": {"bufferSize": 1}}},
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.maxReplicas",
                    INV,
                    "Invalid value: 0: spec.policy.buffer.maxReplicas in body should be greater than or equal to 1",
                )
            ],
            id="schema-max-replicas-written-as-0",
        ),
        pytest.param(
            buffer_spec(minReplicas=-1),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.buffer.minReplicas",
                    INV,
                    "Invalid value: -1: spec.policy.buffer.minReplicas in body should be greater than or equal to 0",
                )
            ],
            id="schema-min-replicas-negative",
        ),
        # -- Webhook
        pytest.param(
            webhook(service={"name": "s", "namespace": "d", "path": "scale"}),
            DEFAULT_GATES,
            [],
            id="webhook-service-ok",
        ),
        pytest.param(
            webhook(url="http://example.com/scale"), DEFAULT_GATES, [], id="webhook-url-ok"
        ),
        pytest.param(
            policy("Webhook"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.webhook",
                    REQ,
                    "Required value: webhook policy config params are missing",
                )
            ],
            id="webhook-missing",
        ),
        pytest.param(
            webhook(),
            DEFAULT_GATES,
            [("spec.policy.webhook", REQ, "Required value: url should be provided")],
            id="webhook-neither-url-nor-service",
        ),
        pytest.param(
            webhook(url="http://a/b", service={"name": "s", "namespace": "d"}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.webhook.url",
                    DUP,
                    'Duplicate value: "service and url cannot be used simultaneously"',
                )
            ],
            id="webhook-both",
        ),
        pytest.param(
            webhook(url="http://a/b", caBundle=NOT_A_CERT),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.webhook.caBundle",
                    INV,
                    "Invalid value: []byte{0x6e, 0x6f, 0x74}: CA Bundle is not valid",
                )
            ],
            id="webhook-ca-bundle-not-pem",
        ),
        pytest.param(
            webhook(url="http://a/b", caBundle="$CA_BUNDLE"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.webhook.caBundle",
                    INV,
                    'Invalid value: "$CA_BUNDLE": spec.policy.webhook.caBundle in body must be of type byte: "$CA_BUNDLE"',
                )
            ],
            id="webhook-tls-example-placeholder",
        ),
        pytest.param(
            webhook(url=":no-scheme"),
            DEFAULT_GATES,
            [("spec.policy.webhook.url", INV, 'Invalid value: ":no-scheme": url is not valid')],
            id="webhook-url-unparseable",
        ),
        pytest.param(
            webhook(service={"name": "s"}),
            DEFAULT_GATES,
            [],
            id="webhook-service-namespace-written-empty",
        ),
        # -- Counter / List
        pytest.param(counter(), DEFAULT_GATES, [], id="counter-ok"),
        pytest.param(
            counter(),
            NO_COUNTS,
            [("spec.policy.counter", FORB, "Forbidden: feature CountsAndLists must be enabled")],
            id="counter-gate-off",
        ),
        pytest.param(
            policy("Counter"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.counter",
                    REQ,
                    "Required value: counter policy config params are missing",
                )
            ],
            id="counter-missing",
        ),
        pytest.param(
            counter(minCapacity=200, maxCapacity=100),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.counter.minCapacity",
                    INV,
                    "Invalid value: 200: minCapacity should be smaller than maxCapacity",
                )
            ],
            id="counter-min-above-max",
        ),
        pytest.param(
            counter(bufferSize=150),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.counter.maxCapacity",
                    INV,
                    "Invalid value: 100: maxCapacity should be bigger than or equal to bufferSize",
                ),
                (
                    "spec.policy.counter.minCapacity",
                    INV,
                    "Invalid value: 10: minCapacity should be bigger than or equal to bufferSize",
                ),
            ],
            id="counter-buffer-above-max-and-min",
        ),
        pytest.param(
            counter(bufferSize=20),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.counter.minCapacity",
                    INV,
                    "Invalid value: 10: minCapacity should be bigger than or equal to bufferSize",
                )
            ],
            id="counter-buffer-above-min",
        ),
        pytest.param(
            counter(bufferSize="10%", minCapacity=0),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.counter.minCapacity",
                    INV,
                    'Invalid value: "10%":  when bufferSize in percentage format is used, minCapacity should be more than 0',
                )
            ],
            id="counter-percent-min-zero-quirk",
        ),
        pytest.param(
            counter(bufferSize=0),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.counter.bufferSize",
                    INV,
                    "Invalid value: 0: must be greater than or equal to 0",
                )
            ],
            id="counter-buffer-zero",
        ),
        pytest.param(lst(), DEFAULT_GATES, [], id="list-ok"),
        pytest.param(
            lst(),
            NO_COUNTS,
            [("spec.policy.list", FORB, "Forbidden: feature CountsAndLists must be enabled")],
            id="list-gate-off",
        ),
        pytest.param(
            policy("List"),
            DEFAULT_GATES,
            [("spec.policy.list", REQ, "Required value: list policy config params are missing")],
            id="list-missing",
        ),
        pytest.param(
            lst(bufferSize="99%", minCapacity=0, maxCapacity=0),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.list.maxCapacity",
                    INV,
                    "Invalid value: 0: spec.policy.list.maxCapacity in body should be greater than or equal to 1",
                )
            ],
            id="list-schema-max-capacity",
        ),
        pytest.param(
            lst(bufferSize="1000%"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.list.bufferSize",
                    INV,
                    'Invalid value: "1000%": bufferSize should be between 1% and 99%',
                )
            ],
            id="list-percent-too-big",
        ),
        # -- Schedule
        pytest.param(schedule(), DEFAULT_GATES, [], id="schedule-ok"),
        pytest.param(
            schedule(),
            NO_SCHEDULE,
            [
                (
                    "spec.policy.schedule",
                    FORB,
                    "Forbidden: feature ScheduledAutoscaler must be enabled",
                )
            ],
            id="schedule-gate-off",
        ),
        pytest.param(
            policy("Schedule"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule",
                    REQ,
                    "Required value: schedule policy config params are missing",
                )
            ],
            id="schedule-missing",
        ),
        pytest.param(
            schedule(timezone="Mars/Olympus_Mons"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.activePeriod.timezone",
                    INV,
                    'Invalid value: "Mars/Olympus_Mons": Error parsing timezone: unknown time zone Mars/Olympus_Mons\n',
                )
            ],
            id="schedule-bad-timezone-newline",
        ),
        pytest.param(
            schedule(between={"end": "2020-01-01T00:00:00Z"}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.between.end",
                    INV,
                    "Invalid value: 2020-01-01 00:00:00 +0000 UTC: end time must be after the current time",
                )
            ],
            id="schedule-end-in-past",
        ),
        pytest.param(
            schedule(between={"start": "2100-01-02T00:00:00Z", "end": "2100-01-01T00:00:00Z"}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.between",
                    INV,
                    "Invalid value: v1.Between{Start:time.Date(2100, time.January, 2, 0, 0, 0, 0, time.Local), "
                    "End:time.Date(2100, time.January, 1, 0, 0, 0, 0, time.Local)}: start time must be before end time",
                )
            ],
            id="schedule-start-after-end",
        ),
        pytest.param(
            schedule(between={"start": "2000-01-02T00:00:00Z", "end": "2000-01-01T00:00:00Z"}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.between.end",
                    INV,
                    "Invalid value: 2000-01-01 00:00:00 +0000 UTC: end time must be after the current time",
                )
            ],
            id="schedule-past-end-hides-order-check",
        ),
        pytest.param(
            schedule(between={"start": "2000-01-01T00:00:00Z"}),
            DEFAULT_GATES,
            [],
            id="schedule-no-end-ok",
        ),
        pytest.param(
            schedule(startCron="not a cron"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.activePeriod.startCron",
                    INV,
                    'Invalid value: "not a cron": invalid startCron: expected exactly 5 fields, found 3: [not a cron]',
                )
            ],
            id="schedule-bad-cron",
        ),
        pytest.param(
            schedule(startCron="CRON_TZ=UTC 0 1 * * *"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.activePeriod.startCron",
                    INV,
                    'Invalid value: "CRON_TZ=UTC 0 1 * * *": CRON_TZ or TZ used in activePeriod is not supported, please use the .schedule.timezone field to specify a timezone',
                )
            ],
            id="schedule-cron-tz-rejected",
        ),
        pytest.param(
            schedule(startCron="TZ=Nowhere/Land 0 1 * * *"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.activePeriod.startCron",
                    INV,
                    'Invalid value: "TZ=Nowhere/Land 0 1 * * *": invalid startCron: provided bad location Nowhere/Land: unknown time zone Nowhere/Land',
                ),
                (
                    "spec.policy.schedule.activePeriod.startCron",
                    INV,
                    'Invalid value: "TZ=Nowhere/Land 0 1 * * *": CRON_TZ or TZ used in activePeriod is not supported, please use the .schedule.timezone field to specify a timezone',
                ),
            ],
            id="schedule-tz-bad-zone-two-errors",
        ),
        pytest.param(
            schedule(duration="5 hours"),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.activePeriod.duration",
                    INV,
                    'Invalid value: "0 1 * * 0": invalid duration: time: unknown unit " hours" in duration "5 hours"',
                )
            ],
            id="schedule-bad-duration-shows-cron-quirk",
        ),
        pytest.param(
            policy(
                "Schedule",
                schedule={
                    "policy": {
                        "type": "Buffer",
                        "buffer": {"bufferSize": 50, "minReplicas": 60, "maxReplicas": 40},
                    }
                },
            ),
            DEFAULT_GATES,
            [],
            id="schedule-inner-policy-not-validated-by-webhook",
        ),
        pytest.param(
            policy("Schedule", schedule={"policy": {"type": "Chain", "chain": []}}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.policy.type",
                    UNSUP,
                    'Unsupported value: "Chain": supported values: "Buffer", "Webhook", "Counter", "List", "Wasm"',
                )
            ],
            id="schema-no-chain-inside-schedule",
        ),
        # -- Chain
        pytest.param(
            chain({"id": "a", **BUFFER}, {"id": "b", **schedule()["policy"]}),
            DEFAULT_GATES,
            [],
            id="chain-ok",
        ),
        pytest.param(
            chain({"id": "a", **BUFFER}),
            NO_SCHEDULE,
            [("spec.policy.chain", FORB, "Forbidden: feature ScheduledAutoscaler must be enabled")],
            id="chain-gate-off",
        ),
        pytest.param(policy("Chain"), DEFAULT_GATES, [], id="chain-empty-accepted"),
        pytest.param(
            chain({"id": "weekday", **BUFFER}, {"id": "weekday", **BUFFER}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.chain",
                    INV,
                    'Invalid value: "weekday": id of chain entry must be unique',
                )
            ],
            id="chain-duplicate-id",
        ),
        pytest.param(
            chain({"id": "a", "type": "Buffer"}),
            DEFAULT_GATES,
            [
                ("spec.policy.chain[0]", REQ, "Required value: valid policy is missing"),
                (
                    "spec.policy.chain[0].policy.buffer",
                    REQ,
                    "Required value: buffer policy config params are missing",
                ),
            ],
            id="chain-entry-without-policy",
        ),
        pytest.param(
            chain(
                {"id": "a", **BUFFER},
                {
                    "id": "b",
                    "type": "Buffer",
                    "buffer": {"bufferSize": 5, "minReplicas": 30, "maxReplicas": 20},
                },
            ),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.chain[1].policy.buffer.minReplicas",
                    INV,
                    "Invalid value: 30: minReplicas should be smaller than maxReplicas",
                )
            ],
            id="chain-entry-validated-under-policy",
        ),
        pytest.param(
            chain({"id": "a", "type": "Chain", "chain": []}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.chain[0].type",
                    UNSUP,
                    'Unsupported value: "Chain": supported values: "Buffer", "Webhook", "Counter", "List", "Wasm", "Schedule"',
                )
            ],
            id="schema-no-chain-inside-chain",
        ),
        pytest.param(
            chain({"id": "a", "buffer": BUFFER["buffer"]}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.chain[0].type",
                    UNSUP,
                    'Unsupported value: "": supported values: "Buffer", "Webhook", "Counter", "List", "Wasm", "Schedule"',
                )
            ],
            id="chain-entry-type-missing-written-empty",
        ),
        pytest.param(
            policy("Schedule", schedule={}),
            DEFAULT_GATES,
            [
                (
                    "spec.policy.schedule.policy.type",
                    UNSUP,
                    'Unsupported value: "": supported values: "Buffer", "Webhook", "Counter", "List", "Wasm"',
                )
            ],
            id="schedule-policy-missing-written-empty",
        ),
        # -- Wasm
        pytest.param(
            wasm(
                **{
                    "from": {
                        "url": {
                            "service": {
                                "name": "fileserver",
                                "namespace": "default",
                                "path": "/wasm/plugin.wasm",
                            }
                        }
                    }
                }
            ),
            DEFAULT_GATES,
            [("spec.policy.wasm", FORB, "Forbidden: feature WasmAutoscaler must be enabled")],
            id="wasm-gate-off",
        ),
        pytest.param(
            wasm(**{"from": {"url": {"url": "http://x/m.wasm"}}, "hash": "a" * 64}),
            WASM,
            [],
            id="wasm-ok",
        ),
        pytest.param(
            policy("Wasm"),
            WASM,
            [("spec.policy.wasm", REQ, "Required value: wasm policy config params are missing")],
            id="wasm-missing",
        ),
        pytest.param(
            wasm(**{"from": {}}),
            WASM,
            [("spec.policy.wasm.from", REQ, "Required value: wasm from configuration is missing")],
            id="wasm-from-url-missing",
        ),
        pytest.param(
            wasm(**{"from": {"url": {}}}),
            WASM,
            [("spec.policy.wasm.from.url", REQ, "Required value: url should be provided")],
            id="wasm-url-config-empty",
        ),
        pytest.param(
            wasm(**{"from": {"url": {"url": "http://x"}}, "hash": "not-hex"}),
            WASM,
            [
                (
                    "spec.policy.wasm.hash",
                    INV,
                    "Invalid value: \"not-hex\": spec.policy.wasm.hash in body should match '^[a-fA-F0-9]{64}$'",
                )
            ],
            id="wasm-hash-pattern",
        ),
        # -- sync and fleetName
        pytest.param(
            {**buffer_spec(), "sync": {"type": "FixedInterval", "fixedInterval": {"seconds": -5}}},
            DEFAULT_GATES,
            [
                (
                    "spec.sync.fixedInterval.seconds",
                    INV,
                    "Invalid value: -5: spec.sync.fixedInterval.seconds in body should be greater than or equal to 0",
                )
            ],
            id="sync-negative-seconds",
        ),
        pytest.param(
            {**buffer_spec(), "fleetName": ""},
            DEFAULT_GATES,
            [
                (
                    "spec.fleetName",
                    INV,
                    'Invalid value: "": spec.fleetName in body should be at least 1 chars long',
                )
            ],
            id="fleet-name-empty-one-cause",
        ),
        pytest.param(
            {**buffer_spec(), "fleetName": "Bad_Name"},
            DEFAULT_GATES,
            [
                (
                    "spec.fleetName",
                    INV,
                    "Invalid value: \"Bad_Name\": spec.fleetName in body should match '^[a-z0-9]([-\\.a-z0-9]*[a-z0-9])?$'",
                )
            ],
            id="fleet-name-pattern",
        ),
        pytest.param(
            {"policy": BUFFER},
            DEFAULT_GATES,
            [
                (
                    "spec.fleetName",
                    INV,
                    'Invalid value: "": spec.fleetName in body should be at least 1 chars long',
                )
            ],
            id="fleet-name-missing-written-empty",
        ),
        pytest.param(
            {"fleetName": "f", "policy": {"buffer": BUFFER["buffer"]}},
            DEFAULT_GATES,
            [
                (
                    "spec.policy.type",
                    UNSUP,
                    'Unsupported value: "": supported values: "Buffer", "Webhook", "Counter", "List", "Wasm", "Schedule", "Chain"',
                )
            ],
            id="policy-type-missing-written-empty",
        ),
    ],
)
def test_validate(
    spec: dict[str, Any], gates: FeatureGates, expected: list[tuple[str, str, str]]
) -> None:
    assert causes(admit(fas(spec), gates)) == expected


def test_fleet_name_too_long() -> None:
    errs = admit(fas({**buffer_spec(), "fleetName": "a" * 64}))
    assert [(e.field, e.reason) for e in errs] == [("spec.fleetName", TOO_LONG)]


def test_metadata_is_checked_with_the_schema() -> None:
    # The apiserver reports metadata errors beside the schema's, before any webhook runs.
    manifest = fas({**buffer_spec(), "fleetName": "a" * 64})
    manifest["metadata"] = {"generateName": "Bad_"}
    errs = admit(manifest)
    assert [(e.field, e.reason) for e in errs] == [
        ("metadata.generateName", "FieldValueInvalid"),
        ("spec.fleetName", TOO_LONG),
    ]


def test_end_time_uses_injected_now() -> None:
    spec = schedule(between={"end": "2030-01-01T00:00:00Z"})
    assert admit(fas(spec), now=NOW) == []
    later = dt.datetime(2031, 1, 1, tzinfo=dt.UTC)
    assert [e.field for e in admit(fas(spec), now=later)] == ["spec.policy.schedule.between.end"]


def test_undecodable_time_is_an_internal_error() -> None:
    spec = schedule(between={"start": "2100-01-01T00:00:00Z", "end": ""})
    assert causes(admit(fas(spec))) == [
        (
            "",
            "InternalError",
            "Internal error: error unmarshalling FleetAutoscaler json after schema validation: "
            'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"',
        )
    ]


def _self_signed_pem() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def test_ca_bundle_with_a_certificate_is_accepted() -> None:
    pem = _self_signed_pem()
    assert append_certs_from_pem(b"junk\n" + pem)
    assert not append_certs_from_pem(pem.replace(b"CERTIFICATE", b"PRIVATE KEY"))
    spec = webhook(url="https://a/b", caBundle=base64.b64encode(pem).decode())
    assert admit(fas(spec)) == []
