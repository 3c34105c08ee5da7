//! Enough MessagePack to read an AMDGPU code object's metadata note (the
//! `amdhsa.kernels` map): every format but extensions and timestamps.

/// A decoded value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Nil,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The value of `key` in a map.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// A non-negative integer.
    pub(crate) fn as_usize(&self) -> Option<usize> {
        match self {
            Value::Int(i) => usize::try_from(*i).ok(),
            _ => None,
        }
    }

    /// A string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An array's elements.
    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Decodes the one value `bytes` holds.
pub(crate) fn decode(bytes: &[u8]) -> Result<Value, String> {
    let mut reader = Reader { bytes, at: 0 };
    let value = reader.value(0)?;
    if reader.at != bytes.len() {
        return Err(format!("{} bytes after the value", bytes.len() - reader.at));
    }
    Ok(value)
}

/// Nesting deeper than this is refused (metadata nests four levels).
const MAX_DEPTH: usize = 32;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn uint(&mut self, n: usize) -> Result<u64, String> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    fn int(&mut self, n: usize) -> Result<i128, String> {
        let raw = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok(i128::from(((raw << shift) as i64) >> shift))
    }

    fn str(&mut self, n: usize) -> Result<Value, String> {
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec())
            .map(Value::Str)
            .map_err(|e| e.to_string())
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        (0..n)
            .map(|_| self.value(depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array)
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        (0..n)
            .map(|_| Ok((self.value(depth + 1)?, self.value(depth + 1)?)))
            .collect::<Result<_, String>>()
            .map(Value::Map)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let byte = self.take(1)?[0];
        let len = |r: &mut Self, n| r.uint(n).map(|v| v as usize);
        match byte {
            0x00..=0x7f => Ok(Value::Int(i128::from(byte))),
            0x80..=0x8f => self.map(usize::from(byte & 0x0f), depth),
            0x90..=0x9f => self.array(usize::from(byte & 0x0f), depth),
            0xa0..=0xbf => self.str(usize::from(byte & 0x1f)),
            0xc0 => Ok(Value::Nil),
            0xc2 | 0xc3 => Ok(Value::Bool(byte == 0xc3)),
            0xc4..=0xc6 => {
                let n = len(self, 1 << (byte - 0xc4))?;
                Ok(Value::Bin(self.take(n)?.to_vec()))
            }
            0xca => Ok(Value::Float(f64::from(
                f32::from_bits(self.uint(4)? as u32),
            ))),
            0xcb => Ok(Value::Float(f64::from_bits(self.uint(8)?))),
            0xcc..=0xcf => Ok(Value::Int(i128::from(self.uint(1 << (byte - 0xcc))?))),
            0xd0..=0xd3 => Ok(Value::Int(self.int(1 << (byte - 0xd0))?)),
            0xd9..=0xdb => {
                let n = len(self, 1 << (byte - 0xd9))?;
                self.str(n)
            }
            0xdc | 0xdd => {
                let n = len(self, 2 << (byte - 0xdc))?;
                self.array(n, depth)
            }
            0xde | 0xdf => {
                let n = len(self, 2 << (byte - 0xde))?;
                self.map(n, depth)
            }
            0xe0..=0xff => Ok(Value::Int(i128::from(byte as i8))),
            other => Err(format!("unsupported format byte {other:#04x}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_arrays_strings_and_integers_decode() {
        // {".name": "k", ".args": [{".size": 8}], "n": -3, "big": 65536}
        let bytes = [
            0x84, 0xa5, b'.', b'n', b'a', b'm', b'e', 0xa1, b'k', 0xa5, b'.', b'a', b'r', b'g',
            b's', 0x91, 0x81, 0xa5, b'.', b's', b'i', b'z', b'e', 0x08, 0xa1, b'n', 0xfd, 0xa3,
            b'b', b'i', b'g', 0xce, 0x00, 0x01, 0x00, 0x00,
        ];
        let v = decode(&bytes).unwrap();
        assert_eq!(v.get(".name").and_then(Value::as_str), Some("k"));
        let args = v.get(".args").and_then(Value::as_array).unwrap();
        assert_eq!(args[0].get(".size").and_then(Value::as_usize), Some(8));
        assert_eq!(v.get("n"), Some(&Value::Int(-3)));
        assert_eq!(v.get("big").and_then(Value::as_usize), Some(65536));
        assert!(decode(&bytes[..10]).unwrap_err().starts_with("truncated"));
    }
}
