"""What a measurement was taken on: versions, GPU, driver, and (through NVML) clocks and throttling.

:class:`ClockMonitor` samples the GPU's SM and memory clocks and its clock-event (throttle) reasons in a
background thread while timing runs. A measurement during which the GPU slowed down for thermal or
power reasons is flagged ``gpu_throttled`` and re-measured by the worker.
"""

from __future__ import annotations

import platform
import threading
from typing import Any

import torch

# NVML clock-event reason bits (nvml.h: nvmlClocksEventReason*); the names are stable, the Python
# constant names changed between nvidia-ml-py releases, so the bits are written out here.
REASON_BITS: dict[str, int] = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clock_setting": 0x100,
}
#: Reasons that mean the chip ran slower than it should have for reasons outside the code being timed.
THROTTLE_REASONS = frozenset({"hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"})


def decode_reasons(mask: int) -> list[str]:
    """Names of the reason bits set in an NVML clock-event mask."""
    return [name for name, bit in REASON_BITS.items() if mask & bit]


def software_versions() -> dict[str, Any]:
    """Python, torch, triton and CUDA versions of this process."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "platform": platform.platform(),
    }
    try:
        import triton

        info["triton"] = triton.__version__
    except Exception:  # noqa: BLE001 - triton is optional on CPU machines
        info["triton"] = None
    info["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return info


def _nvml():
    try:
        import pynvml  # from nvidia-ml-py

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # noqa: BLE001 - no driver / no NVML: recorded as unavailable
        return None


def _nvml_handle(nvml, device: torch.device):
    """NVML handle of a torch CUDA device, matched by PCI bus id (CUDA_VISIBLE_DEVICES renumbers)."""
    props = torch.cuda.get_device_properties(device)
    bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    try:
        return nvml.nvmlDeviceGetHandleByPciBusId(bus.encode())
    except Exception:  # noqa: BLE001
        try:
            return nvml.nvmlDeviceGetHandleByPciBusId(bus)
        except Exception:  # noqa: BLE001
            return None


def device_info(device: torch.device) -> dict[str, Any]:
    """Software versions plus, on CUDA, the GPU's name, compute capability, memory, SMs, L2 and driver."""
    info = software_versions()
    info["device"] = device.type
    if device.type == "cpu":
        info["cpu"] = platform.processor() or platform.machine()
        info["threads"] = torch.get_num_threads()
        return info
    props = torch.cuda.get_device_properties(device)
    info.update(
        gpu_name=props.name,
        compute_capability=f"{props.major}.{props.minor}",
        sm_count=props.multi_processor_count,
        gpu_memory_gib=round(props.total_memory / 2**30, 1),
        l2_bytes=getattr(props, "L2_cache_size", None),
    )
    nvml = _nvml()
    if nvml is None:
        info["nvml"] = "unavailable"
        return info
    try:
        drv = nvml.nvmlSystemGetDriverVersion()
        info["driver"] = drv.decode() if isinstance(drv, bytes) else drv
        h = _nvml_handle(nvml, device)
        if h is not None:
            info["max_sm_clock_mhz"] = nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_SM)
            info["max_mem_clock_mhz"] = nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_MEM)
            info["power_limit_w"] = nvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0
    except Exception as e:  # noqa: BLE001
        info["nvml_error"] = str(e)
    return info


class ClockMonitor:
    """Samples SM/memory clocks and throttle reasons every ``interval_s`` while active.

    Use as a context manager around timing; then read :meth:`summary`. Without NVML (CPU, or a driver
    that does not expose it) the summary says so and never reports throttling.
    """

    def __init__(self, device: torch.device, interval_s: float = 0.05) -> None:
        self.device = device
        self.interval_s = interval_s
        self.samples: list[tuple[int, int, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nvml = _nvml() if device.type == "cuda" else None
        self._handle = _nvml_handle(self._nvml, device) if self._nvml is not None else None
        self.error: str | None = None

    def _sample(self) -> None:
        nv, h = self._nvml, self._handle
        try:
            sm = nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)
            mem = nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)
            get_reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
            self.samples.append((sm, mem, int(get_reasons(h))))
        except Exception as e:  # noqa: BLE001
            self.error = str(e)
            self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval_s)

    def __enter__(self) -> ClockMonitor:
        self.samples = []
        self._stop.clear()
        if self._handle is not None:
            self._thread = threading.Thread(target=self._run, name="cudal1-clock-monitor", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=2.0)
            self._thread = None

    def summary(self) -> dict[str, Any]:
        """Clock ranges (MHz), reasons seen, and whether the GPU throttled."""
        if self._handle is None:
            return {"available": False, "throttled": False}
        if not self.samples:
            return {"available": True, "samples": 0, "throttled": False, "error": self.error}
        sms = [s[0] for s in self.samples]
        mems = [s[1] for s in self.samples]
        mask = 0
        for s in self.samples:
            mask |= s[2]
        reasons = decode_reasons(mask)
        return {
            "available": True,
            "samples": len(self.samples),
            "sm_clock_mhz": [min(sms), max(sms)],
            "mem_clock_mhz": [min(mems), max(mems)],
            "reasons": reasons,
            "throttled": any(r in THROTTLE_REASONS for r in reasons),
            "error": self.error,
        }


