"""Network architecture and functional (parameter-dict) evaluation."""
