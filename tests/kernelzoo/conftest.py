"""Kernel-zoo tests run the Triton kernels for real on a GPU, and in Triton's interpreter on CPU-only
machines (set here, before any kernel module is imported: Triton reads it when a kernel is defined)."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
