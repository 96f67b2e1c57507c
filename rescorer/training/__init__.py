"""Training a model on a table's unique phrase pairs: the pipeline (shortlists, cache, model),
the trainer, its budget and estimate, resume checks and data-parallel training."""
