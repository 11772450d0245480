"""The envduels.v1 exchange: export, import (validate, then write), training data, transfers."""
