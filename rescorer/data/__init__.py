"""From words to tensors: the shortlists, phrase encoding, length-sorted batches and the
encoded pair cache that training reads."""
