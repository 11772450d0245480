"""Forms of the web layer, one module per area (the views parse input with them)."""
