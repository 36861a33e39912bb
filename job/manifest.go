package job

import (
	"fmt"

	"relayout/catalog"
)

func writeManifest(stage string, m *catalog.Manifest) error {
	b, err := m.Encode() // ends with a newline
	if err != nil {
		return fmt.Errorf("job: manifest: %w", err)
	}
	if err := writeFileAtomic(stage, catalog.ManifestName, b); err != nil {
		return fmt.Errorf("job: manifest: %w", err)
	}
	return nil
}
