"""Training the local judge heads: examples from the dev sets, cached features, fitting."""
