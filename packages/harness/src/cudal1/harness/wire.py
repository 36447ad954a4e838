"""What crosses the wire between the parent and a worker besides the messages (:mod:`cudal1.harness.protocol`),
shared by both sides: the dtypes a leaf record may name (and the outbox carries values of), the longest plain
value a record holds, and the environment variable that hands a worker its address-space limit.

A worker writes leaf records (:mod:`cudal1.harness.outputs`); the parent parses and judges them
(:mod:`cudal1.harness.leaves`). Neither side imports the other: both import this vocabulary."""

from __future__ import annotations

import torch

DTYPES: dict[str, torch.dtype] = {
    str(d).removeprefix("torch."): d
    for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
              torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)
}
MAX_VALUE_CHARS = 200  #: a plain (non-tensor) output value is cut to this many characters
#: set by the parent for a CPU worker without a memory cgroup: the bytes of address space it may add to what its
#: imports mapped (:func:`cudal1.harness.address_space.limit_address_space`)
ADDRESS_SPACE_ENV = "CUDAL1_ADDRESS_SPACE_LIMIT"
