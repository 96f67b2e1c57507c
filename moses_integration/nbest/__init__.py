"""N-best lists: add the RNN scores as features, read candidates, tune reranking weights, rerank."""
