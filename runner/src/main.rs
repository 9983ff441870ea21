fn main() {
    eprintln!("ocr-bench: not built yet");
    std::process::exit(2);
}
