package rewriter

import (
	"encoding/json"
	"fmt"

	"relayout/catalog"
)

func writeManifest(stage string, m *catalog.Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("rewriter: manifest: %w", err)
	}
	if err := writeFileAtomic(stage, catalog.ManifestName, append(b, '\n')); err != nil {
		return fmt.Errorf("rewriter: manifest: %w", err)
	}
	return nil
}
