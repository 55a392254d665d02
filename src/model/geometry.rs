//! Rect and image regions: how many bytes a region moves and how much host memory it spans.

/// A host-side region: `origin` and `region` as OpenCL gives them (x in elements of
/// `element_size` bytes, y in rows, z in slices), pitches in bytes, 0 meaning tightly packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub origin: [usize; 3],
    pub region: [usize; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
    pub element_size: u64,
}

/// Where the region starts in host memory, what it moves, what it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Bytes from the host pointer to the region's first byte.
    pub offset: u64,
    pub bytes: u64,
    /// First to last byte touched.
    pub span: u64,
}

impl Region {
    /// Saturating throughout: wild values give big numbers, never a panic.
    pub fn extent(&self) -> Extent {
        let [x, y, z] = self.region.map(|v| v as u64);
        let row_bytes = x.saturating_mul(self.element_size);
        let row = if self.row_pitch == 0 {
            row_bytes
        } else {
            self.row_pitch as u64
        };
        let slice = if self.slice_pitch == 0 {
            row.saturating_mul(y)
        } else {
            self.slice_pitch as u64
        };
        let [ox, oy, oz] = self.origin.map(|v| v as u64);
        let offset = oz
            .saturating_mul(slice)
            .saturating_add(oy.saturating_mul(row))
            .saturating_add(ox.saturating_mul(self.element_size));
        let bytes = row_bytes.saturating_mul(y).saturating_mul(z);
        let span = if bytes == 0 {
            0
        } else {
            (z - 1)
                .saturating_mul(slice)
                .saturating_add((y - 1).saturating_mul(row))
                .saturating_add(row_bytes)
        };
        Extent {
            offset,
            bytes,
            span,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents() {
        let r = |origin, region, row_pitch, slice_pitch, element_size| {
            Region {
                origin,
                region,
                row_pitch,
                slice_pitch,
                element_size,
            }
            .extent()
        };
        let e = |offset, bytes, span| Extent {
            offset,
            bytes,
            span,
        };
        // A 3×2 block of a 16-wide, tightly packed matrix, starting at (1, 2).
        assert_eq!(r([1, 2, 0], [3, 2, 1], 16, 0, 1), e(33, 6, 19));
        // Tightly packed: bytes == span.
        assert_eq!(r([0, 0, 0], [8, 4, 2], 0, 0, 1), e(0, 64, 64));
        // Images: x counts pixels of 4 bytes.
        assert_eq!(r([2, 1, 0], [4, 3, 1], 64, 0, 4), e(72, 48, 144));
        // Slices.
        assert_eq!(r([0, 0, 1], [2, 2, 2], 10, 100, 1), e(100, 8, 112));
        // Empty and wild.
        assert_eq!(r([0, 0, 0], [0, 5, 5], 0, 0, 1).bytes, 0);
        let wild = r([usize::MAX; 3], [usize::MAX; 3], usize::MAX, 0, u64::MAX);
        assert_eq!(wild.bytes, u64::MAX);
    }
}
