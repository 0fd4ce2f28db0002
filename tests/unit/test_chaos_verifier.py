"""The fault matrix's verifier sets apart only the duplicates the delivery guarantee leaves open: a key
the table's own worker took from the stream's claim after its lease ran out, which the stream delivered
in the run of the job that held the claim."""

from collections import Counter

from tests.chaos.verify import after_expiry, delta_sequence, out_of_order, tally


def test_a_key_the_worker_took_after_the_stream_delivered_it_is_the_window_not_a_duplicate():
    arrivals = Counter({1: 2, 2: 1})
    assert after_expiry(arrivals, delivered={1: 100.0, 2: 100.0}, taken={1: 130.0}, starts=[]) == 1


def test_a_key_a_batch_in_flight_delivered_after_the_worker_took_it_is_the_window():
    arrivals = Counter({1: 2})
    assert after_expiry(arrivals, delivered={1: 150.0}, taken={1: 130.0}, starts=[10.0]) == 1


def test_a_key_a_restarted_job_delivered_after_the_worker_took_it_stays_a_duplicate():
    arrivals = Counter({1: 2})
    assert after_expiry(arrivals, delivered={1: 150.0}, taken={1: 130.0}, starts=[10.0, 140.0]) == 0


def test_a_key_the_worker_took_once_only_is_no_window():
    arrivals = Counter({1: 1})
    assert after_expiry(arrivals, delivered={}, taken={1: 130.0}, starts=[]) == 0
    assert tally({1}, arrivals).duplicated == 0


def test_a_key_written_after_a_larger_key_of_its_group_is_out_of_order():
    assert out_of_order([0, 1, 3, 2, 4, 5], lambda k: k % 2) == 0
    assert out_of_order([0, 2, 1, 4, 3, 5], lambda k: k % 2) == 0
    assert out_of_order([2, 0, 1, 3], lambda k: k % 2) == 1


def test_the_write_order_is_read_commit_by_commit_and_row_by_row(tmp_path):
    import pyarrow as pa
    from deltalake import write_deltalake

    for keys in (["5", "1", "9"], ["2", "7"]):
        write_deltalake(str(tmp_path), pa.table({"Payload": pa.array(keys, pa.string())}), mode="append")
    assert delta_sequence(tmp_path, "payload") == [5, 1, 9, 2, 7]
