//! `clxfer export`: a trace's tables for the engines that analyse many runs (DuckDB, Spark, Dask,
//! pandas) as Parquet (typed columns, Snappy-compressed) or CSV: `DIR/<table>/<trace>.parquet`,
//! a directory per table that each engine reads as one table, a file per trace. The tables are
//! `clxfer report --format csv`'s (`csv.rs`: one place for their rows), each row led by the
//! process's `rank` and `host` in its job (`crate::job`; empty outside one) beside its `pid`; in
//! `findings` the CSV's `rank` (the finding's place in its report) is `place` (`order` is a word of SQL).

use super::Report;
use super::csv::{self, Table, Type};
use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The tables exported, each a directory: every one `clxfer report --format csv` gives.
pub const TABLES: [Table; 6] = Table::ALL;

/// What `--format` asks of `clxfer export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    Parquet,
    Csv,
}

impl Export {
    pub fn extension(self) -> &'static str {
        match self {
            Export::Parquet => "parquet",
            Export::Csv => "csv",
        }
    }
}

/// Rows kept before they are written as one of Parquet's row groups.
const ROW_GROUP: usize = 1 << 16;

/// The columns of `table` as exported: `rank` and `host` first.
pub fn columns(table: Table) -> Vec<(&'static str, Type)> {
    let mut out = vec![("rank", Type::Int), ("host", Type::Text)];
    out.extend(
        csv::columns(table)
            .into_iter()
            .map(|(name, ty)| match name {
                "rank" => ("place", ty),
                _ => (name, ty),
            }),
    );
    out
}

/// Writes every table of the trace at `path` (`reports`: its processes' reports) under `dir`,
/// as `<table>/<name>.<ext>`; returns the rows written per table.
pub fn export(
    format: Export,
    path: &Path,
    reports: &[Report],
    dir: &Path,
    name: &str,
) -> Result<Vec<(Table, usize)>, String> {
    // A row's process, by its pid: its rank and host.
    let job: HashMap<String, [String; 2]> = (reports.iter())
        .map(|r| {
            let rank = r.job.rank.map(|n| n.to_string()).unwrap_or_default();
            (
                r.pid.to_string(),
                [rank, r.job.host.clone().unwrap_or_default()],
            )
        })
        .collect();
    let mut written = Vec::new();
    for table in TABLES {
        let word = table.word();
        let out = dir.join(word);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let file = out.join(format!("{name}.{}", format.extension()));
        let mut sink = Sink::new(format, &file, &columns(table), word)?;
        let mut rows = 0;
        csv::rows(table, path, reports, |cells| {
            let [rank, host] = job.get(&cells[0]).cloned().unwrap_or_default();
            let mut row = Vec::with_capacity(cells.len() + 2);
            row.extend([rank, host]);
            row.extend(cells);
            rows += 1;
            sink.row(row)
        })?;
        sink.finish()?;
        written.push((table, rows));
    }
    Ok(written)
}

/// Where one table's rows go.
enum Sink {
    Csv(Box<::csv::Writer<std::fs::File>>),
    Parquet(Box<ParquetSink>),
}

struct ParquetSink {
    writer: SerializedFileWriter<std::fs::File>,
    types: Vec<Type>,
    rows: Vec<Vec<String>>,
    what: String,
}

impl Sink {
    fn new(
        format: Export,
        file: &Path,
        columns: &[(&str, Type)],
        table: &str,
    ) -> Result<Sink, String> {
        let what = file.display().to_string();
        let created = std::fs::File::create_new(file).map_err(|e| format!("{what}: {e}"))?;
        match format {
            Export::Csv => {
                let mut w = ::csv::Writer::from_writer(created);
                (w.write_record(columns.iter().map(|c| c.0)))
                    .map_err(|e| format!("{what}: {e}"))?;
                Ok(Sink::Csv(Box::new(w)))
            }
            Export::Parquet => {
                let fields: Vec<String> = (columns.iter())
                    .map(|(name, ty)| match ty {
                        Type::Int => format!("optional int64 {name};"),
                        Type::Float => format!("optional double {name};"),
                        Type::Bool => format!("optional boolean {name};"),
                        Type::Text => format!("optional binary {name} (UTF8);"),
                    })
                    .collect();
                let message = format!("message {table} {{ {} }}", fields.join(" "));
                let schema = parquet::schema::parser::parse_message_type(&message)
                    .map_err(|e| format!("{what}: {e}"))?;
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .build();
                let writer = SerializedFileWriter::new(created, Arc::new(schema), Arc::new(props))
                    .map_err(|e| format!("{what}: {e}"))?;
                Ok(Sink::Parquet(Box::new(ParquetSink {
                    writer,
                    types: columns.iter().map(|c| c.1).collect(),
                    rows: Vec::new(),
                    what,
                })))
            }
        }
    }

    fn row(&mut self, row: Vec<String>) -> Result<(), String> {
        match self {
            Sink::Csv(w) => w.write_record(&row).map_err(|e| e.to_string()),
            Sink::Parquet(p) => {
                p.rows.push(row);
                if p.rows.len() >= ROW_GROUP {
                    p.row_group()?;
                }
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<(), String> {
        match self {
            Sink::Csv(mut w) => w.flush().map_err(|e| e.to_string()),
            Sink::Parquet(mut p) => {
                p.row_group()?;
                let what = p.what.clone();
                p.writer
                    .close()
                    .map(|_| ())
                    .map_err(|e| format!("{what}: {e}"))
            }
        }
    }
}

impl ParquetSink {
    /// The rows kept, as one row group: each column's values and which are there (an empty or
    /// unreadable cell is null).
    fn row_group(&mut self) -> Result<(), String> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let what = self.what.clone();
        let fail = |e: parquet::errors::ParquetError| format!("{what}: {e}");
        let mut group = self.writer.next_row_group().map_err(fail)?;
        let mut i = 0;
        while let Some(mut column) = group.next_column().map_err(fail)? {
            let cells = self
                .rows
                .iter()
                .map(|r| r.get(i).map_or("", String::as_str));
            let defined = |present: bool| i16::from(present);
            match self.types[i] {
                Type::Int => {
                    let values: Vec<Option<i64>> = cells.map(|c| c.parse().ok()).collect();
                    let levels: Vec<i16> = values.iter().map(|v| defined(v.is_some())).collect();
                    let values: Vec<i64> = values.into_iter().flatten().collect();
                    (column.typed::<Int64Type>()).write_batch(&values, Some(&levels), None)
                }
                Type::Float => {
                    let values: Vec<Option<f64>> = cells.map(|c| c.parse().ok()).collect();
                    let levels: Vec<i16> = values.iter().map(|v| defined(v.is_some())).collect();
                    let values: Vec<f64> = values.into_iter().flatten().collect();
                    (column.typed::<DoubleType>()).write_batch(&values, Some(&levels), None)
                }
                Type::Bool => {
                    let values: Vec<Option<bool>> = cells.map(|c| c.parse().ok()).collect();
                    let levels: Vec<i16> = values.iter().map(|v| defined(v.is_some())).collect();
                    let values: Vec<bool> = values.into_iter().flatten().collect();
                    (column.typed::<BoolType>()).write_batch(&values, Some(&levels), None)
                }
                Type::Text => {
                    let values: Vec<Option<&str>> =
                        cells.map(|c| Some(c).filter(|c| !c.is_empty())).collect();
                    let levels: Vec<i16> = values.iter().map(|v| defined(v.is_some())).collect();
                    let values: Vec<ByteArray> =
                        values.into_iter().flatten().map(ByteArray::from).collect();
                    (column.typed::<ByteArrayType>()).write_batch(&values, Some(&levels), None)
                }
            }
            .map_err(fail)?;
            column.close().map_err(fail)?;
            i += 1;
        }
        group.close().map_err(fail)?;
        self.rows.clear();
        Ok(())
    }
}

/// docs/TRACE.md's section on `clxfer export`: each table's columns and their types.
pub fn markdown() -> String {
    let mut out = String::from(
        "\n## Parquet: `clxfer export`\n\n\
         For DuckDB, Spark, Dask or pandas: `clxfer export TRACES… -o DIR` writes \
         `DIR/<table>/<trace>.parquet` (`--format csv`: `.csv`), a directory per table that \
         each engine reads as one table (`read_parquet('DIR/transfers/*.parquet')` in DuckDB, \
         `spark.read.parquet('DIR/transfers')`, `dd.read_parquet('DIR/transfers')`), a file per \
         trace, Snappy-compressed, one row group per 65,536 rows. The tables are those of \
         `clxfer report --format csv` (above), each row led by the process's `rank` and `host` \
         (null outside a parallel job); in `findings`, the CSV's `rank` (the finding's place in \
         its report) is `place` (`order` is a word of SQL). Every column may be null (an empty CSV cell).\n\n\
         | table | columns (Parquet type) |\n|---|---|\n",
    );
    for table in TABLES {
        let cols: Vec<String> = (columns(table).iter())
            .map(|(name, ty)| {
                let ty = match ty {
                    Type::Int => "int64",
                    Type::Float => "double",
                    Type::Bool => "boolean",
                    Type::Text => "string",
                };
                format!("`{name}` {ty}")
            })
            .collect();
        out.push_str(&format!("| `{}` | {} |\n", table.word(), cols.join(", ")));
    }
    out
}
