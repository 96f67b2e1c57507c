"""The paper's analysis: Table 2 (top targets), Table 3 (generation), representations, and the
figures (t-SNE maps, attention)."""
