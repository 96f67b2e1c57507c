"""How a run behaves on its machine: device and precision, ranks under torchrun, failures as
one line and signals, progress bars."""
