"""Batches: one array of the responses to the requests in it; notifications only get nothing."""

from __future__ import annotations

from storefront_session import Session
from test_lifecycle import assert_error


def ping(request_id):
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


def test_a_mixed_batch_gets_one_array_of_the_responses_to_its_requests(ready: Session):
    ready.send([
        ping(1),
        {"jsonrpc": "2.0", "method": "initialized"},
        42,
        {"jsonrpc": "2.0", "id": "two", "method": "no/such"},
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": 9},
        ping("four"),
    ])
    answer = ready.read_value()
    assert isinstance(answer, list), answer
    by_id = {}
    nulls = []
    for response in answer:
        if response["id"] is None:
            nulls.append(response)
        else:
            by_id[response["id"]] = response
    assert set(by_id) == {1, "two", 3, "four"} and len(nulls) == 1, answer
    assert by_id[1]["result"] == {} and by_id["four"]["result"] == {}
    assert_error(by_id["two"], -32601, "two")
    assert_error(by_id[3], -32600, 3)
    assert_error(nulls[0], -32600, None)


def test_a_batch_of_notifications_gets_nothing(ready: Session):
    ready.send([{"jsonrpc": "2.0", "method": "initialized"}, {"jsonrpc": "2.0", "method": "no/such"},
                {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}])
    assert ready.request("ping", request_id="after") == {"jsonrpc": "2.0", "id": "after", "result": {}}
    # the ping's response came first: nothing was written for the batch


def test_an_empty_batch_gets_one_error_not_an_array(ready: Session):
    ready.send([])
    assert_error(ready.read_value(), -32600, None)
    assert ready.call("ping") == {}


def test_a_batch_of_one_gets_an_array_of_one(ready: Session):
    ready.send([ping(1)])
    assert ready.read_value() == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_a_batch_over_10000_messages_gets_one_error(ready: Session):
    ready.send([{"jsonrpc": "2.0", "method": "initialized"}] * 10_001)
    assert_error(ready.read_value(), -32600, None)
    ready.send([ping(n) for n in range(10_000)])
    answer = ready.read_value()
    assert sorted(response["id"] for response in answer) == list(range(10_000))


def test_lifecycle_rules_apply_inside_batches(session: Session):
    session.send([ping(1), {"jsonrpc": "2.0", "id": 2, "method": "viewModel/open", "params": {"type": "cart"}}])
    answer = {response["id"]: response for response in session.read_value()}
    assert answer[1]["result"] == {}
    assert_error(answer[2], -32002, 2)


def test_states_answered_in_a_batch_are_no_older_than_the_notifications_before_it(ready: Session):
    # A batch's array is written when its last member has answered, after the notifications its members caused:
    # a state it carries (viewModel/open, viewModel/get) is read then, not when its member ran, so that a client
    # that applies the notifications it knows the handle of, and takes the states in the array, stays in step.
    opened = ready.call("viewModel/open", {"type": "cart"})
    cart = opened["viewModel"]
    ready.send([
        {"jsonrpc": "2.0", "id": 3, "method": "cart/add", "params": {"viewModel": cart, "productId": "p-0001", "quantity": 1}},
        {"jsonrpc": "2.0", "id": 4, "method": "viewModel/open", "params": {"type": "cart"}},
        {"jsonrpc": "2.0", "id": 5, "method": "viewModel/get", "params": {"viewModel": cart}},
    ])
    newest: dict[str, int] = {}
    while True:
        message = ready.read_value()
        if isinstance(message, list):
            break
        assert message.get("method") == "viewModel/changed", message
        params = message["params"]
        newest[params["viewModel"]] = max(newest.get(params["viewModel"], 0), params["version"])
    answers = {response["id"]: response["result"] for response in message}
    assert "version" in answers[3]
    for result in (answers[4], answers[5]):
        assert result["version"] >= newest.get(result["viewModel"], 0), (result["viewModel"], result["version"], newest)
    assert answers[5]["version"] >= answers[3]["version"]
    assert answers[5]["state"]["totals"]["itemCount"] == 1
