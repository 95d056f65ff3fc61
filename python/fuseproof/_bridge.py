"""_bridge.py: places the audit's guarded host images as torch tensors on the subject's device and calls the subject.

How tensors cross from C++ to Python: the C++ runner (python/python_runner.cpp) owns every buffer of the op (x, bias;
or the packed x of a *_and_mul op) and out as a host image (guard + data + guard, poisoned) and hands each over as a
writable memoryview with the data's offset and shape; torch.frombuffer wraps it without a copy (torch 1.10 and
later).

The shapes the subject sees: for the 2-input ops, each buffer as the op lays it out ([rows, width]; a bias [width]; a
packed [rows, 2 * width]) and out [rows, width]. For an op with group-broadcast inputs (gated_residual's gate,
modulate's scale and shift: one row per group of group_rows rows), DiT's 3-D shapes: the elementwise inputs (x, y)
and out [rows / group_rows, group_rows, width], a group-broadcast input [rows / group_rows, 1, width], so that eager
broadcasting (`x + gate * y`) computes the op. On a CUDA device the whole image, guards included, is copied to one device allocation, the subject runs on
views into it, and the image is copied back, so guard writes and input changes are seen on the host.
"""

import threading
import time

import torch

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def _one_line(e):
    text = str(e).strip().splitlines()
    head = type(e).__name__ + (": " + text[0] if text else "")
    return head[:400]


def _describe(t):
    return "%s %s on %s" % (list(t.shape), str(t.dtype).replace("torch.", ""), t.device)


def check_result(result, shape, dtype, device):
    """Why `result` is not a valid output of a call whose out has `shape` ("" when it is)."""
    if not isinstance(result, torch.Tensor):
        return "subject returned %s, expected a torch.Tensor" % type(result).__name__
    want = "%s %s on %s" % (list(shape), str(dtype).replace("torch.", ""), device)
    if list(result.shape) != list(shape) or result.dtype != dtype or result.device != device:
        return "subject returned a tensor of %s, expected %s" % (_describe(result), want)
    return ""


class Bridge:
    """One subject: fn(*buffers) -> out, or fn(*buffers, out) -> None when out_arg (buffers in the op's order)."""

    def __init__(self, fn, device, out_arg):
        self.fn = fn
        self.device = torch.device(device)
        self.out_arg = out_arg
        self.cuda = self.device.type == "cuda"

    def hardware(self):
        torch_line = "torch " + torch.__version__
        if self.cuda:
            i = self.device.index if self.device.index is not None else torch.cuda.current_device()
            p = torch.cuda.get_device_properties(i)
            return "%s, sm_%d%d, %d SMs, %s, CUDA %s" % (p.name, p.major, p.minor, p.multi_processor_count, torch_line,
                                                        torch.version.cuda)
        return torch_line + " (CPU)"

    def arch(self):
        """The GPU architecture ("sm_90") the subject runs on; "" on the CPU."""
        if not self.cuda:
            return ""
        major, minor = torch.cuda.get_device_capability(self.device)
        return "sm_%d%d" % (major, minor)

    def device_free_bytes(self):
        return torch.cuda.mem_get_info(self.device)[0] if self.cuda else 0

    def _run(self, args, out):
        """Calls the subject; (rc, message): rc 1 when it raised or returned a wrong tensor."""
        try:
            if self.out_arg:
                self.fn(*args, out)
                return 0, ""
            result = self.fn(*args)
        except Exception as e:  # a raise is the subject's rejection of the call
            return 1, _one_line(e)
        why = check_result(result, out.shape, out.dtype, out.device)
        if why:
            return 1, why
        try:
            out.copy_(result)
        except Exception as e:
            return 1, "subject's output cannot be copied into out: " + _one_line(e)
        return 0, ""

    def _place(self, buffers, out_image, dtype):
        """The images as tensors on the subject's device: (hosts, devices, args, out host, out device, out view)."""
        dt = _DTYPES[dtype]
        hosts, devs, args = [], [], []
        for image, offset, shape in buffers:
            h = torch.frombuffer(image, dtype=torch.int16)
            d = h.to(self.device) if self.cuda else h
            n = 1
            for s in shape:
                n *= s
            hosts.append(h)
            devs.append(d)
            args.append(d[offset:offset + n].view(dt).view(*shape))
        image, offset, shape = out_image
        ho = torch.frombuffer(image, dtype=torch.int16)
        do = ho.to(self.device) if self.cuda else ho
        n = 1
        for s in shape:
            n *= s
        out = do[offset:offset + n].view(dt).view(*shape)
        return hosts, devs, args, ho, do, out

    @staticmethod
    def _download(hosts, devs, ho, do):
        for h, d in list(zip(hosts, devs)) + [(ho, do)]:
            h.copy_(d)

    def call(self, buffers, out_image, dtype):
        """buffers: [(memoryview of the image, data offset in elements, shape)]; out_image: (memoryview, offset,
        shape); dtype "bf16" or "fp16"."""
        hosts, devs, args, ho, do, out = self._place(buffers, out_image, dtype)
        rc, message = self._run(args, out)
        try:
            if self.cuda:
                torch.cuda.synchronize(self.device)
                self._download(hosts, devs, ho, do)
        except Exception as e:  # the device is broken (a sticky CUDA error): the backend cannot go on
            return rc, message, "after the call: " + _one_line(e)
        return rc, message, ""

    def call_concurrent(self, calls, lanes):
        """calls: [(buffers, out_image, dtype)] as for call(). Call i runs on torch.cuda.Stream i % lanes,
        all enqueued with no synchronisation between them (after one event every stream waits on), each between two
        timing events; on the CPU, lane k is a Python thread (torch's CPU ops release the GIL), the threads released
        together. ([(rc, message)], [(start_us, end_us)], fault, lanes in words)."""
        lanes = max(1, min(lanes, len(calls)))
        if not self.cuda:
            return self._threads(calls, lanes)
        placed = [self._place(*c) for c in calls]
        streams = [torch.cuda.Stream(self.device) for _ in range(lanes)]
        # A gate: the current stream spins (torch.cuda._sleep, about 50 ms) before the event every lane waits on, so
        # the calls start together however long Python takes to enqueue them.
        before, origin = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        before.record()
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(100_000_000)
        origin.record()
        for st in streams:
            st.wait_event(origin)
        t0 = time.perf_counter()
        results, events = [], []
        for i, (p, c) in enumerate(zip(placed, calls)):
            st = streams[i % lanes]
            with torch.cuda.stream(st):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(st)
                results.append(self._run(p[2], p[5]))
                e1.record(st)
            events.append((e0, e1))
        enqueue_ms = (time.perf_counter() - t0) * 1000.0
        gate_open = origin.query()
        words = "%d torch.cuda.Stream objects (one per lane)" % lanes
        try:
            torch.cuda.synchronize(self.device)
            words += ", held behind a %.0f ms gate (torch.cuda._sleep) on the current stream; all enqueued in %.1f ms%s" % (
                before.elapsed_time(origin), enqueue_ms,
                " (after the gate had opened)" if gate_open else " (before it opened)")
            spans = [(origin.elapsed_time(e0) * 1000.0, origin.elapsed_time(e1) * 1000.0) for e0, e1 in events]
            for hosts, devs, _, ho, do, _ in placed:
                self._download(hosts, devs, ho, do)
        except Exception as e:
            return results, [], "after the calls on %s: %s" % (words, _one_line(e)), words
        return results, spans, "", words

    def _threads(self, calls, lanes):
        placed = [self._place(*c) for c in calls]
        results, times = [None] * len(calls), [None] * len(calls)
        gate = threading.Barrier(lanes)

        def lane(k):
            gate.wait()
            for i in range(k, len(calls), lanes):
                t0 = time.perf_counter()
                results[i] = self._run(placed[i][2], placed[i][5])
                times[i] = (t0, time.perf_counter())

        pool = [threading.Thread(target=lane, args=(k,)) for k in range(lanes)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        origin = min(t0 for t0, _ in times)
        spans = [((t0 - origin) * 1e6, (t1 - origin) * 1e6) for t0, t1 in times]
        words = "%d Python threads (one per lane, released together; torch's CPU ops release the GIL)" % lanes
        return results, spans, "", words

    def call_graph(self, sets, warm_calls):
        """sets: [[call]] (calls as for call(), every set of the same shapes); warm_calls: sets[0]'s calls on images
        of their own. Each warm-up call made eagerly, then all captured into one torch.cuda.CUDAGraph (torch.cuda.graph, capture_error_mode global) on
        device copies of sets[0]'s images; before replay r, set r's images are copied into those buffers.
        (warm-ups [(rc, message, fault)], capture error, replays [[(rc, message)]], graph in words, fault); None on
        the CPU."""
        if not self.cuda:
            return None
        warm = [self.call(*c) for c in warm_calls]
        for w in warm:
            if w[2]:
                return warm, "", [], "", "in a warm-up call: " + w[2]
        placed = [self._place(*c) for c in sets[0]]
        torch.cuda.synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        results = []
        try:
            with torch.cuda.graph(graph, capture_error_mode="global"):
                for hosts, devs, args, ho, do, out in placed:
                    results.append(self.fn(*args, out) if self.out_arg else self.fn(*args))
        except Exception as e:
            try:
                torch.cuda.synchronize(self.device)
            except Exception as e2:
                return warm, "", [], "", "after a failed capture: " + _one_line(e2)
            return warm, "torch.cuda.graph capture failed: " + _one_line(e), [], "", ""
        if not self.out_arg:
            for (hosts, devs, args, ho, do, out), result in zip(placed, results):
                why = check_result(result, out.shape, out.dtype, out.device)
                if why:
                    return warm, "the captured call " + why, [], "", ""
        replays = []
        try:
            for calls in sets:
                new_hosts = []
                for (hosts, devs, args, ho, do, out), c in zip(placed, calls):
                    hs = [torch.frombuffer(image, dtype=torch.int16) for image, _, _ in c[0]]
                    hn = torch.frombuffer(c[1][0], dtype=torch.int16)
                    for h, d in zip(hs, devs):
                        d.copy_(h)
                    do.copy_(hn)
                    new_hosts.append((hs, hn))
                graph.replay()
                if not self.out_arg:
                    for (hosts, devs, args, ho, do, out), result in zip(placed, results):
                        out.copy_(result)
                torch.cuda.synchronize(self.device)
                for (hosts, devs, args, ho, do, out), (hs, hn) in zip(placed, new_hosts):
                    self._download(hs, devs, hn, do)
                replays.append([(0, "")] * len(calls))
        except Exception as e:
            return warm, "", replays, "", "in a replay: " + _one_line(e)
        words = "one torch.cuda.CUDAGraph (torch.cuda.graph, capture_error_mode global) of the %d calls" % len(placed)
        return warm, "", replays, words, ""
