"""What a caller may see: the prepared surfaces per role (narrowed by the tenant's switches), the
primitives' features and the paged ``*/list`` results."""
