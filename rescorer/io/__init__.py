"""Files in and out, without torch: Moses phrase tables (read, validated, compressed any way),
atomic outputs, units of a resumable run, path checks, score formats and text tables."""
