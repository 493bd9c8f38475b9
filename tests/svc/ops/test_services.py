"""The service state machine (SPEC 3.1) and the registry that starts and stops services."""

from __future__ import annotations

import pytest

from svc.ops.services import Service, ServiceRegistry, State


def _boom() -> None:
    raise OSError("disk on fire")


@pytest.mark.parametrize(
    ("starting", "stopping", "after_start", "after_stop"),
    [
        pytest.param(None, None, State.RUNNING, State.TERMINATED, id="clean"),
        pytest.param(_boom, None, State.FAILED, State.FAILED, id="fails-starting"),
        pytest.param(None, _boom, State.RUNNING, State.FAILED, id="fails-stopping"),
    ],
)
def test_lifecycle(
    starting: object, stopping: object, after_start: State, after_stop: State
) -> None:
    service = Service("s", *(f for f in (starting or (lambda: None), stopping or (lambda: None))))  # type: ignore[arg-type]
    assert service.state is State.NEW
    service.start()
    assert service.state is after_start
    service.stop()
    assert service.state is after_stop
    if after_stop is State.FAILED:
        assert isinstance(service.failure, OSError)


def test_states_print_as_the_reference() -> None:
    assert [str(s) for s in State] == [
        "New",
        "Starting",
        "Running",
        "Stopping",
        "Terminated",
        "Failed",
    ]


def test_failure_while_running_is_terminal() -> None:
    service = Service("s")
    service.start()
    service.fail(RuntimeError("lost the disk"))
    assert service.state is State.FAILED
    service.stop()
    assert service.state is State.FAILED
    with pytest.raises(RuntimeError, match="cannot go Failed -> Starting"):
        service.start()


def test_new_service_terminates_when_stopped() -> None:
    service = Service("s")
    service.stop()
    assert service.state is State.TERMINATED


def test_registry_skips_dependents_of_a_failed_service() -> None:
    order: list[str] = []
    registry = ServiceRegistry()
    registry.add(Service("a", lambda: order.append("start a"), lambda: order.append("stop a")))
    registry.add(Service("b", _boom, depends_on=("a",)))
    registry.add(Service("c", depends_on=("b",)))
    registry.add(
        Service(
            "d", lambda: order.append("start d"), lambda: order.append("stop d"), depends_on=("a",)
        )
    )
    registry.start_all()
    assert [(s.name, s.state) for s in registry] == [
        ("a", State.RUNNING),
        ("b", State.FAILED),
        ("c", State.NEW),
        ("d", State.RUNNING),
    ]
    assert not registry.healthy()
    assert registry.by_state() == [(State.NEW, 1), (State.RUNNING, 2), (State.FAILED, 1)]
    registry.stop_all()
    assert order == ["start a", "start d", "stop d", "stop a"]
    assert registry.by_state() == [(State.TERMINATED, 3), (State.FAILED, 1)]


def test_registry_rejects_unknown_dependencies() -> None:
    with pytest.raises(ValueError, match="unknown"):
        ServiceRegistry().add(Service("x", depends_on=("nope",)))


def test_stop_requested_before_start_starts_nothing() -> None:
    registry = ServiceRegistry()
    registry.add(Service("a"))
    registry.request_stop()
    registry.start_all()
    assert registry["a"].state is State.NEW
