"""gpucloud's CrossGuard policy pack (the importable code lives in gpucloud_policies)."""
