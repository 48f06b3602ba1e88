"""The few things every stage uses: JSON value types, student text made safe, whole-file writes."""
